"""Turn findings' fixes into text edits and apply them to a fixed point."""

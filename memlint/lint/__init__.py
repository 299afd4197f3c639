"""Run the selected rules over one text: gate, batched traversal, `# noqa`."""

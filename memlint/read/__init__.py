"""Read a file into text: encodings, newlines, atomic writes, notebooks split into cells."""

"""What names, bindings, calls and objects a module holds: the scope facts
every other analysis reads."""

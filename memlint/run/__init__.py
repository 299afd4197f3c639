"""Check, fix or diff many files: worker processes, the findings cache, notebooks."""

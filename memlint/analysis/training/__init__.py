"""The training loop's shape: loop roles, the order of training verbs,
accumulation, carried state, where values go, checkpoints."""

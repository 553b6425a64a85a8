"""The CLI subcommands, one module each."""

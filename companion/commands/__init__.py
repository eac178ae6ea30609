"""One module per ``tabletop`` subcommand; see companion.cli."""

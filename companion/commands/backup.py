"""``tabletop export`` / ``tabletop import``: back up and restore the data directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.config import load_config

# companion.backup (tarfile with its compressors) loads only when export or import runs:
# `tabletop` builds every subcommand's parser on each start, `serve` too.


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register export and import."""
    e = sub.add_parser("export", help="write the data directory (scores, history, key) to a .tar.gz")
    e.add_argument("archive", help="file to write, e.g. tabletop-backup.tar.gz")
    e.add_argument("--data", help="data directory (default: the config's)")
    e.add_argument("--config", help="config file")
    e.set_defaults(func=run_export)

    i = sub.add_parser("import", help="restore a data directory from an export")
    i.add_argument("archive", help="a file written by `tabletop export`")
    i.add_argument("--data", help="data directory (default: the config's)")
    i.add_argument("--config", help="config file")
    i.add_argument("--force", action="store_true", help="replace an existing table (the old data is kept beside it)")
    i.set_defaults(func=run_import)


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data).expanduser() if args.data else load_config(args.config).data_dir


def run_export(args: argparse.Namespace) -> int:
    """``tabletop export ARCHIVE``: write the data directory to a .tar.gz."""
    from companion.backup import export_data

    manifest = export_data(_data_dir(args), Path(args.archive))
    print(f"exported {manifest['events']} events and {len(manifest['files'])} files to {args.archive}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    """``tabletop import ARCHIVE``: restore a data directory from an export."""
    from companion.backup import import_data

    data = _data_dir(args)
    manifest = import_data(Path(args.archive), data, force=args.force)
    print(f"imported {manifest['events']} events into {data}")
    if "kept_old_data" in manifest:
        print(f"the previous data is kept in {manifest['kept_old_data']}")
    return 0

"""``tabletop forget-phones``: take back the trust of every phone that entered the PIN.

Works while ``tabletop serve`` runs (the service notices at once: the record is
a file in the data directory, see companion.trust) and when it does not.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    """Register ``tabletop forget-phones``."""
    p = subparsers.add_parser(
        "forget-phones",
        help="take back the trust of every phone (each needs the table PIN again)",
        description="Forget every trusted phone: every copy of every phone's cookie stops working at once, "
                    "also while the table runs. Each phone needs the table PIN again.",
    )
    p.add_argument("--data", metavar="DIR", help="data directory (default: the config's)")
    p.add_argument("--config", metavar="FILE", help="TOML config file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Clear the trust record of the data directory; print how many phones were forgotten."""
    from companion.config import load_config
    from core.errors import ConfigError
    from companion.trust import PhoneTrust

    data = Path(args.data).expanduser() if args.data else load_config(args.config).data_dir
    if not data.is_dir():
        raise ConfigError(f"the data directory {data} does not exist; give the table's --data")
    try:
        count = PhoneTrust(data).revoke_all()
    except OSError as exc:
        raise ConfigError(f"cannot change the trust record in {data} ({exc.strerror or exc})") from None
    noun = "phone" if count == 1 else "phones"
    print(f"Forgot {count} trusted {noun}; each needs the table PIN again.")
    return 0

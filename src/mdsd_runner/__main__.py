"""`python3 -m mdsd_runner ...` (with PYTHONPATH=src): see cli.py."""
import sys

from .cli import main

sys.exit(main())

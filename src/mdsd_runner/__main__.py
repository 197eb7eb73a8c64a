"""`python3 -m mdsd_runner ...` (with PYTHONPATH=src): see cli.py and console.py."""
import sys

from .console import main

sys.exit(main())

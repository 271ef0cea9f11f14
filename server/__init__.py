"""The Solitaire Race server. See the README's layout table: each subpackage has one job."""

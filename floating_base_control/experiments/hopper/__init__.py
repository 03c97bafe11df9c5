"""The hopping experiments of [Feurstein2021] Tables 4.7-4.8 and 4.12-4.13: runs and reports."""

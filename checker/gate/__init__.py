"""The regression gate's judgement: every case's verdict compared with its expectation
(cases.py). `verify --all` runs it (checker/app/gate.py); rendering draws its report."""

# Suite "reliability-short": the cases of suite-reliability.sh with its short
# counts (see there); the host takes the case list from there too.
RELI_MODE=short
. /tests/suite-reliability.sh

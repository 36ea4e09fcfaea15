# Suite "reliability-debug": the cases of suite-reliability.sh with its debug
# counts (see there); the host takes the case list from there too.
RELI_MODE=debug
. /tests/suite-reliability.sh

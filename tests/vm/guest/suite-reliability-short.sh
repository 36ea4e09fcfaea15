# Suite "reliability-short": suite-reliability.sh with the short counts (see there).
# The host reads the case list from the CASES= line below.
CASES="load-unload toggles hotplug hold64 forkstorm params unpriv fuzz dmesg"
RELI_MODE=short
. /tests/suite-reliability.sh

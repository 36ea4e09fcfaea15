# Suite "reliability-debug": suite-reliability.sh with the debug counts (see there).
# The host reads the case list from the CASES= line below.
CASES="load-unload toggles hotplug hold64 forkstorm params unpriv fuzz dmesg"
RELI_MODE=debug
. /tests/suite-reliability.sh

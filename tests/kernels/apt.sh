# The Debian archive for the kernels of other suites (sourced, with $out
# set): the URIs of the machine's own apt configuration
# (/etc/apt/sources.list.d/debian.sources) with the suites bullseye and
# bookworm-backports, in a private apt state under $out/apt, so the
# machine's apt state is untouched and no host name is ever written here.
# Used by tests/kernels/fetch.sh and build-irq.sh.

apt_ready=
apt_state() {
	[ -n "$apt_ready" ] && return "$apt_ready"
	apt_ready=1
	local src=/etc/apt/sources.list.d/debian.sources uri key a=$out/apt
	[ -r "$src" ] || { echo "no $src to take the mirror from" >&2; return 1; }
	# the first URIs line is the main archive (the security one comes later)
	uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$src")
	key=$(awk '/^Signed-By:/ { print $2; exit }' "$src")
	[ -n "$uri" ] || { echo "no URIs line in $src" >&2; return 1; }
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	cat > "$a/sources.sources" <<-EOF
	Types: deb
	URIs: $uri
	Suites: bullseye bookworm-backports
	Components: main
	Signed-By: ${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
	EOF
	APT=(apt-get -q -o Dir::Etc::SourceList="$a/sources.sources"
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$a/lists"
		-o Dir::Cache="$a/cache" -o Dir::Cache::Archives="$a/cache/archives"
		-o APT::Default-Release=)
	# bullseye is old: its Release file is past Valid-Until on snapshots
	if ! "${APT[@]}" -o Acquire::Check-Valid-Until=false update >"$a/update.log" 2>&1; then
		echo "apt-get update failed: $(tail -3 "$a/update.log" | tr '\n' ' ')" >&2
		return 1
	fi
	apt_ready=0
}

# newest package name matching a regex, from the private lists
newest() {	# regex
	apt-cache -o Dir::Etc::SourceList="$out/apt/sources.sources" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$out/apt/lists" \
		-o Dir::Cache="$out/apt/cache" pkgnames 2>/dev/null |
		grep -E "^$1\$" | sort -V | tail -1
}


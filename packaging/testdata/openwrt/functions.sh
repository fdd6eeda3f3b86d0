# The parts of OpenWrt's /lib/functions.sh, /lib/functions/network.sh and
# /lib/functions/procd.sh that deploy/openwrt/wgperf-exporter calls, for
# packaging/openwrt_init_test.go. Configuration is read as OpenWrt reads it:
# the uci file evaluated with config/option/list defined; procd's calls are
# printed one per line.

config() { CONFIG_SECTION=$2; }
option() { eval "CONFIG_${CONFIG_SECTION}_$1=\$2"; }
list() {
	eval "n=\${CONFIG_${CONFIG_SECTION}_$1_LENGTH:-0}"
	n=$((n + 1))
	eval "CONFIG_${CONFIG_SECTION}_$1_ITEM$n=\$2; CONFIG_${CONFIG_SECTION}_$1_LENGTH=$n"
}
config_load() {
	[ -f "$UCI_CONFIG_DIR/$1" ] || return 1
	. "$UCI_CONFIG_DIR/$1"
}
config_get() {
	eval "$1=\${CONFIG_$2_$3:-\$4}"
}
config_get_bool() {
	local v
	eval "v=\${CONFIG_$2_$3:-\$4}"
	case "$v" in
	1 | on | true | yes | enabled) v=1 ;;
	0 | off | false | no | disabled) v=0 ;;
	*) v=$4 ;;
	esac
	eval "$1=\$v"
}
config_list_foreach() {
	local i=1 n
	eval "n=\${CONFIG_$1_$2_LENGTH:-0}"
	while [ "$i" -le "$n" ]; do
		eval "$3 \"\$CONFIG_$1_$2_ITEM$i\""
		i=$((i + 1))
	done
}
# network_get_ipaddr VAR IFACE: the address in $NET_<IFACE>, or failure.
network_get_ipaddr() {
	eval "[ -n \"\${NET_$2}\" ] && $1=\${NET_$2}"
}

# network_get_ipaddrs6 VAR IFACE: the IPv6 addresses in $NET6_<IFACE>
# (space-separated, as netifd lists them), or failure.
network_get_ipaddrs6() {
	eval "[ -n \"\${NET6_$2}\" ] && $1=\"\${NET6_$2}\""
}
procd_open_instance() { echo "open_instance"; }
procd_set_param() { local k=$1; shift; echo "set_param $k $*"; }
procd_append_param() { local k=$1; shift; echo "append_param $k $*"; }
procd_close_instance() { echo "close_instance"; }
procd_add_reload_trigger() { echo "reload_trigger $*"; }
procd_add_reload_interface_trigger() { echo "interface_trigger $*"; }

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tests/e2e/run.sh; helpers and setup in tests/e2e/lib.sh.

# One plugin search (record/caps) for all three: doctor, run -print-perf-commands
# and decode say "plugin" or "no plugin" alike, with SNAPTRACE_NO_DLFILTER=1
# (all three: no plugin) and without it.
t_plugin_agree() {
	local no doc cmds dec bad=""

	for no in "" 1; do
		SNAPTRACE_NO_DLFILTER=$no snap doctor_plugin$no doctor
		doc=0
		grep -q '^ok  *dlfilter' "$tmp/doctor_plugin$no.out" && doc=1
		SNAPTRACE_NO_DLFILTER=$no snap cmds_plugin$no run -print-perf-commands -- true
		cmds=0
		grep -q -- '--dlfilter' "$tmp/cmds_plugin$no.out" && cmds=1
		SNAPTRACE_NO_DLFILTER=$no snap decode_plugin$no decode "$tmp/probe.data" -v \
			-o "$tmp/plugin$no.fxt"
		if grep -q 'snaptrace: dlfilter plugin ' "$tmp/decode_plugin$no.err"; then
			dec=1
		elif grep -q 'snaptrace: text path: ' "$tmp/decode_plugin$no.err"; then
			dec=0
		else
			bad="$bad; NO_DLFILTER=$no: decode -v names no choice: $(head -2 \
				"$tmp/decode_plugin$no.err")"
			continue
		fi
		if [ "$doc$cmds" != "$dec$dec" ]; then
			bad="$bad; NO_DLFILTER=$no: doctor $doc, -print-perf-commands $cmds, decode $dec"
		fi
		if [ "$no" = 1 ] && [ "$dec" != 0 ]; then
			bad="$bad; decode used the plugin under SNAPTRACE_NO_DLFILTER=1"
		fi
	done
	if [ -z "$bad" ]; then
		pass plugin_agree
	else
		failed plugin_agree "${bad#; }"
	fi
}

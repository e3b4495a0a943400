#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end recording tests with the real perf: snaptrace run/attach/doctor,
# triggers, threads, scopes, refusals. Each test probes first and prints SKIP
# with the reason when perf or permissions are missing. Recording is kept short
# (<= ~1 s, cpu-clock <= 4 kHz, --no-bpf-event). Prints PASS/FAIL/SKIP lines.
#
# One file per test (or small group) in tests/e2e/cases/, each defining t_NAME
# functions; tests/e2e/lib.sh holds the set-up and the helpers they share. This
# runner sources them all and calls the functions in the order below (a new
# test file adds its functions to the list: a t_ function not listed fails).
# E2E_ONLY="t_offcpu t_python3" runs just those (while developing).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
for f in tests/e2e/cases/*.sh; do
	. "$f"
done

# The tests that run without perf, then those that need it, then the last checks.
no_perf_tests="t_usage t_print_cmds t_doctor t_pt_missing t_pt_control t_lbr_refused"
perf_tests="t_run_sampling t_run_signal_status t_forward_signals t_attach t_attach_idle t_attach_twice
	t_trigger_run t_trigger_attach t_trigger_thread t_trigger_late_thread t_trigger_library
	t_trigger_signal_before_entry
	t_trigger_two_pids t_trigger_never t_trigger_picker t_multi_snapshot t_multi_snapshot_every_hit t_multi_snapshot_full
	t_multi_thread
	t_kernel t_private_workdir t_non_root t_callgraph_auto t_dwarf_short t_offcpu t_thread_names
	t_coverage t_coverage_asleep t_coverage_threads t_coverage_lost t_output_checked t_too_short t_trigger_at_once t_python3 t_plugin_agree
	t_cfi_names t_cfi_build_id t_cfi_gzip t_vdso_frameless t_sampling_model
	t_lang_positions t_lang_triggers t_lang_picker t_lang_attach_several t_lang_decode_progress"
final_tests="t_kernel_refused t_leftovers"

unlisted=""
for t in $(declare -F | sed -n 's/^declare -f \(t_.*\)/\1/p'); do
	case " $(echo $no_perf_tests $perf_tests $final_tests) " in
	*" $t "*) ;;
	*) unlisted="$unlisted $t" ;;
	esac
done
if [ -n "$unlisted" ]; then
	echo "FAIL e2e_setup: tests/e2e/cases defines$unlisted, not listed in tests/e2e/run.sh"
	exit 1
fi

if [ -n "${E2E_ONLY:-}" ]; then
	for t in $E2E_ONLY; do "$t"; done
	t_leftovers
	exit $fail
fi
for t in $no_perf_tests; do "$t"; done
if [ -n "$noperf" ]; then
	for t in run_sampling attach_sigint trigger_run trigger_attach multi_thread kernel_frames; do
		skip $t "$noperf"
	done
else
	for t in $perf_tests; do "$t"; done
fi
for t in $final_tests; do "$t"; done
exit $fail

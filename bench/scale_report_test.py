#!/usr/bin/python3
"""Unit test of bench/scale_report.py on recorded data: the raw log of a
bench/scale.sh run shrunk to 2 sites x 2 servers and 8 calls (the lines as
the script writes them), then altered the ways a run can go wrong. Each
verdict must be met on the good log and not met on the broken one.

    python3 bench/scale_report_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_report  # noqa: E402

GOOD = """\
setup sites=2 per_site=2 clients=4 interval=4 probability=0.5 size=100 idle=10 duration=24 policy=completion quick=1 cpus=2 load1=3.1
site id=s1 addr=10.79.1.2 rate=1gbit
site id=s2 addr=10.79.2.2 rate=500mbit
meta phase=empty t=1000.00 cpu_s=0.01 rss_kb=9000 hwm_kb=9000
meta_status phase=empty pid=42 uptime_seconds=0.5 policy=completion servers=0 placements=0 reports=0 probe_requests=0 probes=0 outcomes_ok=0 outcomes_failed=0 servers_expired=0 servers_closed=0 connections_accepted=1
server addr=10.79.1.2:3001 site=s1 pid=101
server addr=10.79.1.2:3002 site=s1 pid=102
server addr=10.79.2.2:3001 site=s2 pid=103
server addr=10.79.2.2:3002 site=s2 pid=104
meta phase=registered t=1002.00 cpu_s=0.05 rss_kb=9400 hwm_kb=9400
meta_status phase=registered servers=4 placements=0 reports=8 probe_requests=0 probes=0 outcomes_ok=0 outcomes_failed=0 servers_expired=0 servers_closed=0 connections_accepted=6
ninfds phase=registered count=4 cpu_s=0.40 rss_kb=40000
meta phase=idle t=1012.00 cpu_s=0.09 rss_kb=9400 hwm_kb=9400
meta_status phase=idle servers=4 placements=0 reports=48 probe_requests=0 probes=0 outcomes_ok=0 outcomes_failed=0 servers_expired=0 servers_closed=0 connections_accepted=7
ninfds phase=idle count=4 cpu_s=0.44 rss_kb=40000
loadtest site=s1 exit=0
loadtest site=s2 exit=0
meta phase=loaded t=1037.00 cpu_s=0.29 rss_kb=9800 hwm_kb=9900
meta_status phase=loaded servers=4 placements=8 reports=148 probe_requests=2 probes=8 outcomes_ok=8 outcomes_failed=0 servers_expired=0 servers_closed=0 connections_accepted=19
ninfds phase=loaded count=4 cpu_s=0.94 rss_kb=44000
served addr=10.79.1.2:3001 completed=3 failed=0 cancelled=0
served addr=10.79.1.2:3002 completed=1 failed=0 cancelled=0
served addr=10.79.2.2:3001 completed=2 failed=0 cancelled=0
served addr=10.79.2.2:3002 completed=2 failed=0 cancelled=0
call site=s1 client=0 server=10.79.1.2:3001 outcome=ok start_s=0.1 response_s=0.010 wait_s=0
call site=s1 client=1 server=10.79.1.2:3001 outcome=ok start_s=0.2 response_s=0.012 wait_s=0
call site=s1 client=0 server=10.79.1.2:3002 outcome=ok start_s=4.1 response_s=0.011 wait_s=0
call site=s1 client=1 server=10.79.1.2:3001 outcome=ok start_s=8.2 response_s=0.013 wait_s=0
call site=s2 client=0 server=10.79.2.2:3001 outcome=ok start_s=0.3 response_s=0.020 wait_s=0
call site=s2 client=1 server=10.79.2.2:3002 outcome=ok start_s=0.4 response_s=0.021 wait_s=0
call site=s2 client=0 server=10.79.2.2:3001 outcome=ok start_s=4.3 response_s=0.022 wait_s=0
call site=s2 client=1 server=10.79.2.2:3002 outcome=ok start_s=4.4 response_s=0.080 wait_s=0
meta_servers server address site slots running queued reserved placed work_s load_avg flops/s startup_s heard_s_ago functions
meta_servers 1 10.79.1.2:3001 s1 1 0 0 0 3 0.000 0.10 1e9 0.0100 0.2 40
leftover processes=0
"""


def analyse(text):
    return scale_report.analyse(scale_report.parse(text.splitlines()))


def verdicts(a):
    return [ok for _, _, _, ok in a["checks"]]


def check(a, key):
    """(measured, verdict) of the check named `key`."""
    found = [(measured, ok) for k, _, measured, ok in a["checks"] if k == key]
    assert len(found) == 1, key
    return found[0]


class ScaleReportTest(unittest.TestCase):
    def test_good_run_meets_every_check(self):
        a = analyse(GOOD)
        # No call left its site: no path to judge.
        self.assertEqual(verdicts(a), [True, True, None, True, True, True, True, True])
        self.assertTrue(a["all_met"])
        self.assertEqual(a["issued"], 8)
        self.assertEqual(a["matrix"]["s1"], {"s1": 4, "s2": 0})
        self.assertAlmostEqual(a["own_share"], 1.0)
        self.assertAlmostEqual(a["per_site"]["s2"]["p95_ms"], 80.0)
        self.assertAlmostEqual(a["per_site"]["s1"]["response_ms"], 11.5)

    def test_costs_per_server_report_and_placement(self):
        a = analyse(GOOD)
        self.assertAlmostEqual(a["rss_per_server_kb"], 100.0)  # (9400 - 9000) / 4
        self.assertEqual(a["idle_reports"], 40)
        self.assertAlmostEqual(a["cpu_per_report_us"], 1000.0)  # 0.04 s / 40
        self.assertEqual(a["placements"], 8)
        self.assertAlmostEqual(a["cpu_per_placement_us"], 25000.0)  # 0.20 s / 8
        # Less 100 reports at 1 ms each: 0.10 s left for 8 placements.
        self.assertAlmostEqual(a["net_cpu_per_placement_us"], 12500.0)
        # Reports that would cost more than all the CPU: no figure, not 0.
        b = analyse(GOOD.replace("phase=loaded servers=4 placements=8 reports=148",
                                 "phase=loaded servers=4 placements=8 reports=448"))
        self.assertIsNone(b["net_cpu_per_placement_us"])
        d = scale_report.parse(GOOD.replace("reports=148", "reports=448").splitlines())
        self.assertIn("n/a (the reports", scale_report.render(d, scale_report.analyse(d)))

    def test_a_call_on_an_unregistered_server_fails_placement(self):
        a = analyse(GOOD.replace("client=1 server=10.79.1.2:3001 outcome=ok start_s=8.2",
                                 "client=1 server=10.79.9.2:3001 outcome=ok start_s=8.2"))
        self.assertFalse(check(a, "placement")[1])
        self.assertEqual(a["unknown_servers"], ["10.79.9.2:3001"])

    def test_a_server_expiring_during_the_run_fails_placement(self):
        a = analyse(GOOD.replace("phase=loaded servers=4 placements=8 reports=148 probe_requests=2 "
                                 "probes=8 outcomes_ok=8 outcomes_failed=0 servers_expired=0",
                                 "phase=loaded servers=3 placements=8 reports=148 probe_requests=2 "
                                 "probes=8 outcomes_ok=8 outcomes_failed=0 servers_expired=1"))
        self.assertFalse(check(a, "placement")[1])

    def test_calls_sent_across_sites_fail_the_completion_check(self):
        text = GOOD
        for i in (0, 1):  # half of s1's calls to s2
            text = text.replace(f"site=s1 client={i} server=10.79.1.2:3001 outcome=ok start_s=0.{i + 1}",
                                f"site=s1 client={i} server=10.79.2.2:3001 outcome=ok start_s=0.{i + 1}")
        a = analyse(text)
        self.assertAlmostEqual(a["per_site"]["s1"]["share"], 0.5)
        self.assertAlmostEqual(a["own_share"], 0.75)  # 6 of 8: still at the bar
        self.assertTrue(check(a, "own_site")[1])
        text = text.replace("site=s1 client=0 server=10.79.1.2:3002", "site=s1 client=0 server=10.79.2.2:3002")
        self.assertFalse(check(analyse(text), "own_site")[1])

    def test_calls_leaving_their_site_over_faster_or_slower_paths(self):
        # A third site behind 20 Mbit/s with one idle server: s1's other
        # sites are s2 (path 500 Mbit/s) and s3 (20), 260 on average.
        three = GOOD.replace("site id=s2 addr=10.79.2.2 rate=500mbit\n",
                             "site id=s2 addr=10.79.2.2 rate=500mbit\nsite id=s3 addr=10.79.3.2 rate=20mbit\n")
        three = three.replace("server addr=10.79.2.2:3002 site=s2 pid=104\n",
                              "server addr=10.79.2.2:3002 site=s2 pid=104\nserver addr=10.79.3.2:3001 site=s3 pid=105\n")
        to_s2 = three.replace("site=s1 client=1 server=10.79.1.2:3001 outcome=ok start_s=8.2",
                              "site=s1 client=1 server=10.79.2.2:3001 outcome=ok start_s=8.2")
        a = analyse(to_s2)
        self.assertEqual(a["offsite"], 1)
        self.assertAlmostEqual(a["faster_paths"], 500 / 260)
        self.assertTrue(check(a, "faster_paths")[1])
        to_s3 = three.replace("site=s1 client=1 server=10.79.1.2:3001 outcome=ok start_s=8.2",
                              "site=s1 client=1 server=10.79.3.2:3001 outcome=ok start_s=8.2")
        a = analyse(to_s3)
        self.assertAlmostEqual(a["faster_paths"], 20 / 260)
        self.assertFalse(check(a, "faster_paths")[1])
        # The same call at the first tick (start before the interval, 4 s):
        # placed on default link figures, not judged.
        first = to_s3.replace("site=s1 client=1 server=10.79.3.2:3001 outcome=ok start_s=8.2",
                              "site=s1 client=1 server=10.79.3.2:3001 outcome=ok start_s=0.2")
        a = analyse(first)
        self.assertIsNone(a["faster_paths"])
        self.assertEqual(a["first_tick_offsite"], 1)
        self.assertEqual(scale_report.mbits("1gbit"), 1000)
        self.assertEqual(scale_report.mbits("500kbit"), 0.5)
        self.assertIsNone(scale_report.mbits("none"))

    def test_two_sites_leave_no_path_to_choose(self):
        a = analyse(GOOD.replace("site=s1 client=1 server=10.79.1.2:3001 outcome=ok start_s=8.2",
                                 "site=s1 client=1 server=10.79.2.2:3001 outcome=ok start_s=8.2"))
        self.assertIsNone(a["faster_paths"])
        self.assertIsNone(check(a, "faster_paths")[1])

    def test_other_policies_get_no_locality_verdict(self):
        a = analyse(GOOD.replace("policy=completion quick", "policy=round-robin quick"))
        self.assertIsNone(check(a, "own_site")[1])
        self.assertTrue(a["all_met"])

    def test_a_failed_call_is_lost(self):
        a = analyse(GOOD.replace("client=1 server=10.79.2.2:3002 outcome=ok start_s=4.4",
                                 "client=1 server=10.79.2.2:3002 outcome=server start_s=4.4"))
        self.assertEqual(a["failed"], 1)
        self.assertFalse(check(a, "issued")[1])
        self.assertFalse(check(a, "ninfds")[1])  # 8 completed at the ninfds, 7 ok
        self.assertFalse(a["all_met"])

    def test_a_call_the_ninfds_did_not_count(self):
        a = analyse(GOOD.replace("served addr=10.79.2.2:3002 completed=2", "served addr=10.79.2.2:3002 completed=1"))
        self.assertTrue(check(a, "issued")[1])
        self.assertFalse(check(a, "ninfds")[1])

    def test_placements_not_matching_calls(self):
        a = analyse(GOOD.replace("phase=loaded servers=4 placements=8", "phase=loaded servers=4 placements=9"))
        self.assertFalse(check(a, "meta")[1])

    def test_a_starved_server(self):
        # 8 calls on 4 servers: a server with 0 is below a tenth of 2.
        a = analyse(GOOD.replace("served addr=10.79.1.2:3002 completed=1", "served addr=10.79.1.2:3002 completed=0"))
        self.assertEqual(a["starved"], ["10.79.1.2:3002"])
        self.assertFalse(check(a, "starved")[1])
        self.assertTrue(check(analyse(GOOD), "starved")[1])

    def test_a_loadtest_that_failed(self):
        a = analyse(GOOD.replace("loadtest site=s2 exit=0", "loadtest site=s2 exit=1"))
        self.assertFalse(check(a, "issued")[1])

    def test_leftover_processes(self):
        a = analyse(GOOD.replace("leftover processes=0", "leftover processes=2\nleftover 4242 dgesv\nleftover 4243 ninfd"))
        self.assertFalse(check(a, "leftover")[1])
        self.assertIn("4242 dgesv", check(a, "leftover")[0])

    def test_render_has_every_section(self):
        d = scale_report.parse(GOOD.splitlines())
        text = scale_report.render(d, scale_report.analyse(d))
        for heading in ("## Checks", "## Sites", "## ninf-meta's cost"):
            self.assertIn(heading, text)
        self.assertIn("| s1 | 1gbit | 2 | 4 | 4 | 1.00 |", text)
        self.assertNotIn("not met", text)
        self.assertIn("linpack n = 100", text)

    def test_delays_ep_and_slot_waits_are_shown(self):
        text = (GOOD.replace("size=100", "workload=ep size=22 delays=2,10")
                .replace("rate=1gbit", "rate=1gbit delay_ms=2")
                .replace("rate=500mbit", "rate=500mbit delay_ms=10")
                .replace("response_s=0.080 wait_s=0", "response_s=0.080 wait_s=0.040"))
        d = scale_report.parse(text.splitlines())
        out = scale_report.render(d, scale_report.analyse(d))
        self.assertIn("NAS EP with 2^22 pairs", out)
        self.assertIn("the delays each way are the two sites' added together", out)
        self.assertIn("| s1 | 1gbit, 2 ms | 2 | 4 | 4 | 1.00 |", out)
        # s2's four calls waited 0, 0, 0 and 40 ms for their slots: 10 ms.
        self.assertRegex(out, r"\| s2 \| 500mbit, 10 ms \|.*\| 10\.0 \|")


if __name__ == "__main__":
    unittest.main()

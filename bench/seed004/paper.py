"""The Ninf paper's own numbers (seed 004: Takefusa et al., "Multi-client
LAN/WAN Performance Analysis of Ninf", section 4), as printed, for the
multi-client items: Tables 3-8 and what the text says of Figs. 6 and 8.

Rows are keyed by (n, c). Linpack tables hold
(Mflops max, min, mean, MB/s max, min, mean, utilization %, load);
Table 8 holds (Mflops max, min, mean, communication s max, min, mean,
utilization %, load). Figs. 6 and 8 are plots whose values are not printed;
only the text's statements about them are kept.
"""

# The paper's machine and client model (sections 4.1, 4.2.1).
STEP_S = 3.0  # s: every client calls with probability P every STEP_S seconds
PROBABILITY = 0.5
J90_PES = 4
SMP_CPUS = 16
# Per-PE compute speed of the J90 in the LAN runs: Table 3's c = 1 call
# time less its transfer time (8n^2 + 16n bytes at the table's MB/s):
# n = 600: 2.03 s - 1.16 s -> 166 Mflops; 1000: 167; 1400: 184.
J90_PE_MFLOPS = 170.0
LAN_MBS = 2.5    # Table 3, c = 1
WAN_MBS = 0.128  # Table 6, n = 600, c = 1

TABLE3 = {  # J90 LAN, 1-PE version (4 tasks at once)
    (600, 1): (72.71, 69.90, 71.16, 2.57, 2.42, 2.48, 12.63, 0.68),
    (600, 2): (72.01, 64.33, 69.63, 2.52, 2.10, 2.41, 20.86, 1.20),
    (600, 4): (72.40, 43.85, 67.05, 2.55, 1.89, 2.34, 42.03, 1.99),
    (600, 8): (72.04, 17.44, 49.02, 2.55, 0.60, 1.87, 82.20, 4.90),
    (600, 16): (64.13, 8.12, 21.27, 2.25, 0.24, 0.86, 98.66, 13.21),
    (1000, 1): (95.06, 93.13, 93.40, 2.58, 2.49, 2.53, 21.40, 1.06),
    (1000, 2): (96.09, 54.10, 89.90, 2.51, 2.25, 2.42, 37.84, 1.62),
    (1000, 4): (93.64, 59.92, 81.39, 2.58, 1.47, 2.11, 76.02, 3.58),
    (1000, 8): (83.91, 30.79, 46.48, 2.39, 0.65, 1.35, 99.38, 7.72),
    (1000, 16): (33.24, 15.26, 21.14, 1.12, 0.31, 0.57, 100.00, 16.01),
    (1400, 1): (115.01, 112.26, 113.65, 2.58, 2.51, 2.54, 24.27, 1.19),
    (1400, 2): (113.58, 85.15, 110.48, 2.54, 2.36, 2.44, 46.95, 2.19),
    (1400, 4): (109.54, 70.89, 93.35, 2.44, 1.60, 2.19, 88.40, 4.14),
    (1400, 8): (64.74, 42.17, 50.11, 1.72, 0.81, 1.21, 99.97, 8.53),
    (1400, 16): (27.87, 19.41, 23.93, 0.74, 0.38, 0.51, 100.00, 16.64),
}

TABLE4 = {  # J90 LAN, 4-PE version (one task at a time on all 4 PEs)
    (600, 1): (94.05, 81.76, 91.46, 2.55, 2.40, 2.47, 14.89, 0.87),
    (600, 2): (91.05, 21.62, 83.17, 2.46, 2.04, 2.36, 27.56, 1.42),
    (600, 4): (92.58, 21.70, 75.83, 2.52, 1.17, 2.12, 53.56, 4.06),
    (600, 8): (89.35, 24.31, 51.51, 2.50, 0.55, 1.36, 90.00, 9.98),
    (600, 16): (56.73, 8.87, 18.69, 1.83, 0.19, 0.46, 99.85, 19.96),
    (1000, 1): (150.96, 70.39, 141.43, 2.56, 2.46, 2.51, 28.64, 1.45),
    (1000, 2): (148.92, 62.15, 127.63, 2.52, 1.87, 2.28, 55.56, 2.89),
    (1000, 4): (134.26, 61.01, 92.98, 2.53, 0.98, 1.56, 87.90, 6.02),
    (1000, 8): (67.14, 27.76, 45.85, 1.21, 0.42, 0.69, 99.61, 11.01),
    (1000, 16): (32.22, 13.93, 20.33, 0.59, 0.20, 0.30, 99.99, 24.81),
    (1400, 1): (196.08, 174.28, 193.03, 2.54, 2.47, 2.51, 40.87, 1.86),
    (1400, 2): (184.17, 139.53, 157.98, 2.48, 1.80, 2.13, 66.79, 3.17),
    (1400, 4): (119.26, 74.88, 96.26, 2.16, 0.92, 1.26, 96.80, 7.53),
    (1400, 8): (69.26, 34.23, 48.27, 0.91, 0.43, 0.59, 99.86, 15.11),
    (1400, 16): (35.27, 17.80, 23.25, 0.48, 0.21, 0.28, 100.00, 30.29),
}

TABLE5 = {  # 16-CPU SuperSPARC SMP, LAN, 1-PE task-parallel
    (600, 4): (4.37, 2.98, 3.80, 1.36, 1.07, 1.18, 49.92, 6.08),
    (600, 8): (4.25, 2.73, 3.51, 1.05, 0.14, 0.37, 62.91, 8.84),
    (600, 16): (3.77, 2.03, 2.81, 1.40, 0.10, 0.34, 89.89, 15.37),
}

TABLE6 = {  # WAN single site (Ocha-U -> ETL J90), 1-PE
    (600, 1): (7.81, 3.25, 5.90, 0.166, 0.067, 0.128, 4.22, 0.37),
    (600, 2): (5.93, 3.63, 4.69, 0.122, 0.074, 0.096, 8.03, 0.49),
    (600, 4): (3.63, 1.22, 2.41, 0.075, 0.025, 0.050, 8.34, 0.47),
    (600, 8): (1.47, 0.59, 1.14, 0.030, 0.012, 0.023, 7.80, 0.46),
    (600, 16): (0.69, 0.37, 0.54, 0.014, 0.007, 0.011, 8.10, 0.46),
    (1000, 1): (12.05, 4.41, 9.28, 0.164, 0.054, 0.123, 5.26, 0.39),
    (1000, 2): (8.47, 5.81, 7.18, 0.104, 0.071, 0.088, 9.00, 0.52),
    (1000, 4): (4.38, 1.84, 3.66, 0.055, 0.022, 0.045, 8.83, 0.52),
    (1000, 8): (2.27, 0.99, 1.83, 0.028, 0.012, 0.022, 8.39, 0.47),
    (1000, 16): (1.18, 0.54, 0.90, 0.014, 0.006, 0.011, 8.22, 0.47),
    (1400, 1): (17.32, 9.93, 13.89, 0.164, 0.090, 0.130, 6.57, 0.41),
    (1400, 2): (11.22, 7.91, 9.29, 0.099, 0.069, 0.082, 12.75, 0.66),
    (1400, 4): (6.47, 2.15, 5.38, 0.058, 0.019, 0.048, 9.46, 0.52),
    (1400, 8): (3.03, 1.31, 2.50, 0.027, 0.011, 0.022, 8.89, 0.50),
    (1400, 16): (1.58, 0.76, 1.25, 0.014, 0.007, 0.011, 10.60, 0.57),
}

TABLE7 = {  # WAN single site, 4-PE
    (600, 1): (8.00, 7.24, 7.68, 0.166, 0.153, 0.161, 6.85, 0.40),
    (600, 2): (6.05, 1.51, 3.77, 0.124, 0.030, 0.077, 6.90, 0.42),
    (600, 4): (3.57, 0.92, 2.46, 0.073, 0.019, 0.051, 8.94, 0.50),
    (600, 8): (1.52, 0.49, 1.08, 0.031, 0.011, 0.022, 7.99, 0.49),
    (600, 16): (0.90, 0.29, 0.54, 0.018, 0.006, 0.011, 8.17, 0.49),
    (1000, 1): (12.75, 7.26, 10.50, 0.160, 0.091, 0.131, 6.43, 0.39),
    (1000, 2): (8.22, 5.89, 7.15, 0.101, 0.072, 0.088, 9.23, 0.52),
    (1000, 4): (4.80, 1.46, 3.97, 0.061, 0.018, 0.049, 9.39, 0.53),
    (1000, 8): (2.42, 0.97, 1.82, 0.029, 0.012, 0.022, 8.71, 0.53),
    (1000, 16): (1.36, 0.47, 0.88, 0.016, 0.006, 0.011, 8.75, 0.49),
    (1400, 1): (18.46, 11.87, 16.42, 0.166, 0.104, 0.147, 8.15, 0.47),
    (1400, 2): (10.44, 8.03, 9.34, 0.092, 0.070, 0.082, 13.58, 0.73),
    (1400, 4): (7.00, 2.00, 5.50, 0.061, 0.017, 0.048, 15.61, 0.81),
    (1400, 8): (2.91, 1.42, 2.46, 0.025, 0.012, 0.021, 9.20, 0.56),
    (1400, 16): (1.59, 0.79, 1.25, 0.014, 0.007, 0.011, 9.35, 0.54),
}

TABLE8 = {  # EP, 2^24 samples, 1 PE per call; (network, c)
    ('LAN', 1): (0.17, 0.17, 0.17, 0.01, 0.01, 0.01, 30.51, 1.44),
    ('LAN', 2): (0.17, 0.17, 0.17, 0.01, 0.01, 0.01, 53.86, 2.39),
    ('LAN', 4): (0.17, 0.16, 0.17, 0.01, 0.01, 0.01, 98.18, 4.18),
    ('LAN', 8): (0.09, 0.08, 0.08, 0.01, 0.01, 0.01, 100.00, 8.90),
    ('LAN', 16): (0.04, 0.04, 0.04, 0.02, 0.01, 0.01, 100.00, 16.88),
    ('WAN', 1): (0.17, 0.17, 0.17, 0.06, 0.04, 0.04, 25.02, 1.21),
    ('WAN', 2): (0.17, 0.16, 0.17, 0.06, 0.04, 0.04, 49.16, 2.19),
    ('WAN', 4): (0.17, 0.16, 0.17, 0.24, 0.04, 0.05, 98.14, 4.16),
    ('WAN', 8): (0.09, 0.08, 0.08, 0.05, 0.04, 0.04, 100.00, 8.91),
    ('WAN', 16): (0.04, 0.04, 0.04, 0.09, 0.04, 0.04, 99.94, 16.88),
}

LINPACK_TABLES = {'table3': TABLE3, 'table4': TABLE4, 'table5': TABLE5,
                  'table6': TABLE6, 'table7': TABLE7}
# The other version's table, for the 1-PE against 4-PE comparison.
COMPANION = {'table3': TABLE4, 'table4': TABLE3, 'table6': TABLE7, 'table7': TABLE6}

# Fig. 8 (section 4.2.4): 4-PE, n = 600, c = 1 and 4 per site, four sites
# (Ocha-U, U-Tokyo, NITech, TITech) against Ocha-U alone. Printed in the
# text: site a's (ETL-Ocha-U) throughput fell only 9-18 % (c = 1) and
# 18-44 % (c = 4) with the other sites calling; server CPU 20.2-30.3 %
# (c = 1, 4 clients) and 27.1-34.2 % (c = 4, 16 clients).
FIG8_SITE_A_DROP = {1: (0.09, 0.18), 4: (0.18, 0.44)}
FIG8_UTIL = {1: (20.2, 30.3), 4: (27.1, 34.2)}

# Fig. 6 (section 4.2.2): "good while c x t is below the 16 CPUs; with
# highly threaded routines performance falls sharply as c grows".

CLAIMS = {
    'table3': "1-PE on the LAN: per-call Mflops and MB/s fall with c, the server saturates "
              "(99-100 % by c = 8 for every n), load approaches c, at c = 16 every n converges "
              "(21-24 Mflops), and at c = 1 larger n is faster.",
    'table4': "4-PE on the LAN: faster than 1-PE at small c (91/141/193 against 71/93/114 "
              "Mflops at c = 1), higher utilization and load, and only slightly behind 1-PE at "
              "c = 16 (18.7-23.3 against 21.1-23.9).",
    'table5': "On 16 CPUs with c <= 16, per-call Mflops barely falls (3.80 -> 2.81, 0.74) and "
              "the server keeps headroom (89.9 % at c = 16).",
    'fig6': "Per-call Mflops is good while c x t stays below the CPUs, and falls sharply as c "
            "grows for highly threaded routines.",
    'table6': "WAN, one site, 1-PE: per-call Mflops and MB/s fall as 1/c (the link is shared), "
              "the server stays idle (4-16 %), larger n is faster.",
    'table7': "WAN, one site, 4-PE: the same as Table 6; 1-PE and 4-PE are about equal.",
    'fig8': "WAN, four sites against one: site a's throughput falls only 9-18 % (c = 1) and "
            "18-44 % (c = 4) when the other sites call, so the total far exceeds one site's; "
            "the server stays at 20-34 % CPU; per-client performance is limited by each "
            "one-to-one link.",
    'table8': "EP, 1 PE per call: per-call Mflops held up to c = PEs then 1/2 and 1/4, the "
              "server saturates at c = PEs, LAN and WAN give the same performance.",
}

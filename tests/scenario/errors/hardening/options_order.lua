-- issue 12 item 11: the checker of option tables names the wrong key the same way in
-- every process (it used to report the first key of the hash walk: with many string
-- keys the walk meets the boolean or a number first depending on the hash seed).
scenario { name = "x" }
net { k0 = 0, k1 = 1, k2 = 2, k3 = 3, k4 = 4, k5 = 5, k6 = 6, k7 = 7,
      k8 = 8, k9 = 9, k10 = 10, k11 = 11, k12 = 12, k13 = 13, k14 = 14, k15 = 15,
      k16 = 16, k17 = 17, k18 = 18, k19 = 19, k20 = 20, k21 = 21, k22 = 22, k23 = 23,
      k24 = 24, k25 = 25, k26 = 26, k27 = 27, k28 = 28, k29 = 29, k30 = 30, k31 = 31,
      k32 = 32, k33 = 33, k34 = 34, k35 = 35, k36 = 36, k37 = 37, k38 = 38, k39 = 39,
      [true] = 1, [1000] = 0, [2.5] = 1 }

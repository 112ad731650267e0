# sdcMicro 5.8.1's measure_risk figures for free1's mixed key and a microagg k = 3 release of it
# (tests/data/sdcmicro_measure_risk_release.csv, read by tests/test_population_risk.py).
#
# sdcMicro itself is not a Debian package; its measure_risk computes the individual risk with two
# pure-R functions, freqCalc() (R/freqCalc.r, needs data.table) and indivRisk() (R/indivRisk.R),
# which this script sources from the sdcMicro source at commit
# cf3251017482bb215f0a9abf4a930f502399fb72 (Version: 5.8.1), exactly as measure_riskWORK() calls
# them: freqCalc(data, keyVars, w, alpha = 1); indivRisk(f, survey = !is.null(w));
# global_risk_ER = sum(rk); global_risk = global_risk_ER / n.
#
# Produced on Debian bookworm (r-base-core 4.2.2, r-cran-data.table 1.14.8) with
#   git -C sdcMicro show cf3251017482bb215f0a9abf4a930f502399fb72:R/freqCalc.r > freqCalc.r
#   git -C sdcMicro show cf3251017482bb215f0a9abf4a930f502399fb72:R/indivRisk.R > indivRisk.R
#   Rscript tests/data/sdcmicro_measure_risk_release.R SDCMICRO_R_DIR ../shared/datasets/free1.csv \
#       tests/data/free1_mixed_k3_release.csv tests/data/sdcmicro_measure_risk_release.csv
# The release is microagg's (commit 18b1559):
#   ma.anonymize(free1[AGE, INCOME, REGION, SEX, MARSTAT, WEIGHT], k=3,
#                columns=[AGE, INCOME, REGION, SEX, MARSTAT], categorical=[REGION, SEX, MARSTAT],
#                weights="WEIGHT").to_csv(index=False)
# Sourced this way, the two functions reproduce ../shared/reference/sdcmicro_measure_risk.csv (printed
# by the installed sdcMicro 5.8.1), e.g. its missing-cells case: 0.0161111581322206 and 64.4446325288823.
# Every key column is read as text and made a factor (as measure_risk's examples do), so a class
# is the records whose key cells are the same strings.
library(data.table)
args <- commandArgs(trailingOnly = TRUE)
source(file.path(args[1], "freqCalc.r"))
source(file.path(args[1], "indivRisk.R"))
key <- c("AGE", "INCOME", "REGION", "SEX", "MARSTAT")
score <- function(path, weighted) {
  d <- read.csv(path, colClasses = "character")
  for (v in key) d[[v]] <- factor(d[[v]])
  d$WEIGHT <- as.numeric(d$WEIGHT)
  w <- if (weighted) "WEIGHT" else NULL
  f <- freqCalc(d, keyVars = key, w = w, alpha = 1)
  ir <- indivRisk(f, survey = !is.null(w))
  rk <- ir$rk
  data.frame(global_risk = sum(rk) / length(rk), expected_reidentifications = sum(rk), max_risk = max(rk),
             risk_first_record = rk[1], risk_last_record = rk[length(rk)], sum_squared_risk = sum(rk^2),
             records_fk1 = sum(f$fk == 1), sum_Fk = sum(f$Fk))
}
out <- rbind(
  cbind(file = "original", weights = "WEIGHT", score(args[2], TRUE)),
  cbind(file = "release", weights = "WEIGHT", score(args[3], TRUE)),
  cbind(file = "original", weights = "", score(args[2], FALSE)),
  cbind(file = "release", weights = "", score(args[3], FALSE))
)
num <- vapply(out, is.numeric, logical(1))
out[num] <- lapply(out[num], function(x) sprintf("%.17g", x))
write.csv(out, args[4], row.names = FALSE, quote = FALSE)

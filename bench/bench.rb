#!/usr/bin/env ruby
# frozen_string_literal: true

# The bench (make bench) and its figures and results, one verb a call. `run` drives
# the sandbox (through sandbox/driver.rb) and takes the readings; everything that
# turns readings into figures lives beside it in bench/lib/clone_army_bench, with
# its specs in spec/unit/bench. The other verbs are the figures' arithmetic, for
# people and for checking a committed result again.
#
#   bench.rb run                           the bench, as root; settings from the environment
#                                          (clone_army_bench/settings.rb lists them)
#   bench.rb start                         the bench run detached (make bench-checkin): its PID and log
#                                          in bench/results/<stamp>.raw/, which it writes as it goes
#   bench.rb status RESULTS/STAMP.raw      a detached run's figures so far (BENCH=checkin's)
#   bench.rb stop RESULTS/STAMP.raw        SIGTERM to it: its teardown writes what it measured
#   bench.rb min-runs                      the fewest runs a median is taken of
#   bench.rb median < NUMBERS              the median (at least min-runs numbers)
#   bench.rb median-any < NUMBERS          the median of any count (a batch's boots; a whole one stays whole)
#   bench.rb quote RUN...                  "min A, max B; runs: ..." (and p95 with enough runs)
#   bench.rb ratio NUM DEN NAME NAME       "<ratio> <NAME num / NAME den>"
#   bench.rb slope XS YS                   least-squares slope of YS over XS (space-separated), or null
#   bench.rb met-le VALUE TARGET           true when VALUE <= TARGET, false (also for no value)
#   bench.rb fig KEY LABEL VALUE UNIT TARGET MET [NOTE]   a figure as a JSON line
#   bench.rb meta KEY JSON                 a scale entry as a JSON line
#   bench.rb write WORK RESULTS STAMP STATUS   WORK/figures and WORK/meta to RESULTS/STAMP.json and .md
#   bench.rb pss-idle K < PSS              the first K readings with no agent process
#   bench.rb pss-avg < PSS | pss-total < PSS | pss-note < PSS
#   bench.rb checked-in FROM TO < RUNS     clones with a successful run that ended in [FROM, TO]
#   bench.rb all-in-at SINCE CLONES < RUNS the end of the last clone's first successful run since SINCE
#   bench.rb starts < RUNS                 "<clone> <start>" of each distinct run (the phasing's raw data)
#   bench.rb phasing FROM INTERVAL < STARTS   "<share> <busiest> <total> <met> <twice even: share, runs>"
#   bench.rb derive RESULTS/STAMP [--write]   re-derive a result from its raw data; print its table
#   bench.rb pages RESULTS HELPER          the pages of the kept timelines, made with HELPER
#   bench.rb across RESULTS/STAMP... [--json]   runs of one bench side by side (at least three):
#                                          each figure in every run, its median and that judged
$LOAD_PATH.unshift(File.join(__dir__, 'lib'))
require 'clone_army_bench/cli'

exit CloneArmyBench::Cli.run(ARGV, $stdin, $stdout, $stderr)

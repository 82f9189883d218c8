# frozen_string_literal: true

require_relative 'stats'

module CloneArmyBench
  # The bench's settings, from the environment (the scale used is recorded in
  # the result). A setting out of its range is refused before anything runs,
  # naming the variable, what it takes and what it was.
  #
  #   BENCH             fleet (default: the fleet grown in steps), growth, checkin (a fleet
  #                     checking in through its first interval and one more, run detached), or cpu
  #                     (the CPU per agent run of the fleet bench alone, beside no fleet)
  #   CLONES            the large fleet: timer-mode clones (default 500, checkin 1000; e.g. 40 for a quick run)
  #   GROW_BATCH        growth: clones added a batch (default 100)
  #   GROW_RUNINTERVAL  growth: the clones' interval (default 86400: their phased first
  #                     runs, the fleet's interval apart over CLONES, leave the boots alone)
  #   RUNINTERVAL       the fleet's interval in seconds (default 3.6 * CLONES, at least 60:
  #                     one run every 3.6 s, as 500 clones at 1800 s; checkin 3600)
  #   RAMP_UP           ramp_up of the last step's apply (checkin: its one apply), seconds (default 300)
  #   SPLAY             checkin: the class's splay, seconds below RUNINTERVAL / 2 (default 0, the class's)
  #   SAMPLE_EVERY      checkin: seconds between CPU samples and copies of the recorder's timeline
  #                     (default 60, 10 to 3600)
  #   WATCH_EVERY       checkin: seconds between readings of every clone's last run (default 60, 5 to
  #                     RUNINTERVAL / 2, so that no run is missed)
  #   RUN_TIMEOUT       checkin: the whole run's bound in seconds, then it ends as if stopped (default
  #                     Settings#checkin_bound: setup, ramp, two intervals with their splay and grace)
  #   K                 clones averaged for idle memory, per mode (default 3)
  #   CPU_REPS          agent runs per side for the CPU ratio (default 5; a median takes at least 3)
  #   NOOP_REPS         timed no-op applies (each beside an empty apply) per step (default 5; at least 3)
  #   START_TIMEOUT     seconds allowed for a step's clones to be running (default 120 + CLONES)
  #   APPLY_TIMEOUT     seconds allowed for one puppet apply in the sandbox (default 1800)
  #   EXEC_TIMEOUT      seconds allowed for any other command in the sandbox (default 600)
  #   SERVER_ADDR       loopback address of the sandbox's Puppet Server (default 127.0.0.5,
  #                     beside the acceptance suites' servers; sandbox.sh checks it)
  #   SERVER_NAME       the name the clones use for it (default puppet)
  #   BENCH_DRY_RUN     1: check the settings, print what the run would do, start nothing
  Settings = Struct.new(:bench, :clones, :grow_batch, :grow_runinterval, :runinterval, :ramp_up, :k, :cpu_reps,
                        :noop_reps, :start_timeout, :apply_timeout, :exec_timeout, :server_addr, :server_name,
                        :dry_run, :splay, :sample_every, :watch_every, :run_timeout, keyword_init: true) do
    # The fleet's steps: 50, 100, 40 more, then the rest, none above CLONES.
    def fleet_steps
      step1 = [clones, 50].min
      step2 = [clones, 100].min
      [step1, step2, [step2 + 40, clones].min, clones]
    end

    # growth: [first, last] of each batch of GROW_BATCH clones up to CLONES.
    def batches
      (1..clones).step(grow_batch).map { |first| [first, [first + grow_batch - 1, clones].min] }
    end

    def growth?
      bench == 'growth'
    end

    def checkin?
      bench == 'checkin'
    end

    def cpu?
      bench == 'cpu'
    end

    # checkin: the seconds a run may take when nothing hangs: the sandbox and the
    # server up and the base applied (SETUP), the apply with its ramp, the clones
    # started, the first interval and one more, each with its splay and grace, and
    # the teardown (SETUP again).
    def checkin_bound
      (2 * Settings::CHECKIN_SETUP) + ramp_up + start_timeout + (2 * (runinterval + splay + Settings::CHECKIN_GRACE))
    end

    # What the result's scale records of them.
    def scale
      base = { 'bench' => bench, 'clones' => clones, 'runinterval' => runinterval, 'ramp_up' => ramp_up }
      return base.merge(checkin_scale) if checkin?

      base.merge('k' => k, 'cpu_reps' => cpu_reps, 'noop_reps' => noop_reps, 'server_addr' => server_addr)
    end

    def checkin_scale
      { 'splay' => splay, 'sample_every' => sample_every, 'watch_every' => watch_every,
        'run_timeout' => run_timeout, 'server_addr' => server_addr }
    end
  end

  # A setting the bench does not take.
  class Refused < ArgumentError; end

  # Settings from the environment, each checked against what it takes.
  class Settings
    BENCHES = ['fleet', 'growth', 'checkin', 'cpu'].freeze
    DEFAULT_CLONES = { 'fleet' => 500, 'growth' => 500, 'checkin' => 1000 }.freeze
    # checkin: seconds allowed for the sandbox, the server, PuppetDB and the base (and
    # again for the teardown), and the grace after an interval for its last runs to end
    # and be read.
    CHECKIN_SETUP = 1800
    CHECKIN_GRACE = 180
    DRY_RUN = { nil => false, '' => false, '0' => false, '1' => true }.freeze
    # clone-army's shortest run interval.
    MIN_RUNINTERVAL = 60
    POSITIVE = %r{\A[1-9][0-9]*\z}.freeze
    SECONDS = %r{\A[0-9]+\z}.freeze

    def self.from_env(env)
      bench = env.fetch('BENCH', 'fleet')
      refuse('BENCH', BENCHES.join(', ').sub(%r{, (\w+)\z}, ' or \\1'), bench) unless BENCHES.include?(bench)
      clones = fleet_size(env, bench)
      runinterval = at_least(env, 'RUNINTERVAL', default_runinterval(bench, clones), MIN_RUNINTERVAL)
      settings = new(bench: bench, clones: clones, dry_run: dry_run(env), runinterval: runinterval,
                     grow_batch: positive(env, 'GROW_BATCH', 100),
                     grow_runinterval: at_least(env, 'GROW_RUNINTERVAL', 86_400, MIN_RUNINTERVAL),
                     ramp_up: seconds(env, 'RAMP_UP', 300), k: positive(env, 'K', 3),
                     cpu_reps: runs(env, 'CPU_REPS'), noop_reps: runs(env, 'NOOP_REPS'),
                     start_timeout: positive(env, 'START_TIMEOUT', 120 + clones),
                     apply_timeout: positive(env, 'APPLY_TIMEOUT', 1800), exec_timeout: positive(env, 'EXEC_TIMEOUT', 600),
                     server_addr: env.fetch('SERVER_ADDR', '127.0.0.5'), server_name: env.fetch('SERVER_NAME', 'puppet'),
                     **checkin_settings(env, runinterval))
      settings.tap { |st| st.run_timeout = positive(env, 'RUN_TIMEOUT', st.checkin_bound) }
    end

    # CLONES: the fleet's size; BENCH=cpu makes no fleet, and takes none.
    def self.fleet_size(env, bench)
      return positive(env, 'CLONES', DEFAULT_CLONES.fetch(bench)) unless bench == 'cpu'

      refuse('CLONES', 'unset with BENCH=cpu (it makes no fleet)', env['CLONES']) if env.key?('CLONES')
      0
    end

    # The checkin bench's own settings (checked whatever the bench, so a typo is
    # never silently ignored).
    def self.checkin_settings(env, runinterval)
      splay = seconds(env, 'SPLAY', 0)
      # Below half an interval, so that a clone's next run stays inside the window
      # CheckinFigures looks for it in.
      refuse('SPLAY', "a number of seconds below RUNINTERVAL / 2 (#{runinterval / 2})", splay) if splay * 2 >= runinterval
      { splay: splay, sample_every: within(env, 'SAMPLE_EVERY', 60, 10..3600),
        watch_every: within(env, 'WATCH_EVERY', [60, runinterval / 2].min, 5..(runinterval / 2)) }
    end

    def self.within(env, name, default, range)
      value = positive(env, name, default)
      refuse(name, "#{range.min} to #{range.max} seconds", value) unless range.cover?(value)
      value
    end

    def self.dry_run(env)
      dry = env['BENCH_DRY_RUN']
      refuse('BENCH_DRY_RUN', '1 (a dry run), 0 or empty', dry) unless DRY_RUN.key?(dry)
      DRY_RUN.fetch(dry)
    end

    # The fleet's default: one run every 3.6 s across it, as 500 clones at 1800 s;
    # checkin's the issue's: an hour.
    def self.default_runinterval(bench, clones)
      bench == 'checkin' ? 3600 : [clones * 36 / 10, MIN_RUNINTERVAL].max
    end

    def self.refuse(name, allowed, value)
      raise Refused, "#{name} must be #{allowed}, not '#{value}'"
    end

    def self.positive(env, name, default)
      value = env.fetch(name, default.to_s)
      refuse(name, 'a positive number', value) unless POSITIVE.match?(value)
      Integer(value, 10)
    end

    def self.seconds(env, name, default)
      value = env.fetch(name, default.to_s)
      refuse(name, 'a number of seconds', value) unless SECONDS.match?(value)
      Integer(value, 10)
    end

    def self.at_least(env, name, default, min)
      value = positive(env, name, default)
      refuse(name, "at least #{min} (clone-army's minimum)", value) if value < min
      value
    end

    # A median is taken of these runs: at least Stats::MIN_MEDIAN_RUNS of them.
    def self.runs(env, name)
      value = positive(env, name, 5)
      min = Stats::MIN_MEDIAN_RUNS
      refuse(name, "at least #{min} (the runs a median is taken of)", value) if value < min
      value
    end
  end
end

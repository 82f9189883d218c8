# frozen_string_literal: true

require_relative 'batch'
require_relative 'checkins'
require_relative 'cpu_comparison'
require_relative 'memory'
require_relative 'pss'
require_relative 'readings'
require_relative 'recorder_cpu'
require_relative 'stats'

module CloneArmyBench
  # BENCH=fleet: the fleet grown in steps, as a user grows one (Settings#fleet_steps):
  # the class with 50 clones and timed no-op applies, 100 and timed no-op applies,
  # 40 new clones made by the helper beside them (seconds per clone), then the rest
  # up to CLONES in one apply with ramp_up, and the large fleet's figures.
  class Fleet
    # The K daemon-mode clones' first runs are waited for this long.
    DAEMON_FIRST_RUN = 300
    # MiB of an idle daemon-mode clone.
    PSS_DAEMON_TARGET = 75
    # Seconds at 100 clones.
    NOOP_TARGET = 5

    def initialize(bench)
      @bench = bench
      @s = bench.settings
      @host = bench.host
      @checkins = Checkins.new(bench)
      @recorder = RecorderCpu.new(bench)
    end

    def run
      step1, step2, step3, = @s.fleet_steps
      @bench.record.meta('steps', @s.fleet_steps)
      mem0 = Memory.used_kib
      grow_and_time_noop(step1)
      grow_and_time_noop(step2) if step2 > step1
      add_beside(step2, step3) if step3 > step2
      grow_to_all
      extra_clones
      CpuComparison.new(@bench).run
      daemon_memory
      Memory.figures(@bench, mem0, @s.clones)
      @checkins.count_and_figure
      @recorder.figure('the check-in window')
      catalog_figures
      @bench.write_results('partial', quiet: true)
      @checkins.phasing
    end

    # For the teardown of a run that failed: what was measured so far.
    def partial
      @checkins.stop_watching
      @checkins.partial
      @recorder.partial
    end

    private

    # The class with n clones, then NOOP_REPS timed no-op applies, each beside a
    # timed empty `puppet apply -e ''` (alternating, under the same fleet load), so
    # that the class's own share of the time is seen apart from Puppet's start and facts.
    def grow_and_time_noop(count)
      @bench.log("puppet apply: the fleet grows to #{count} clones")
      @bench.apply_class(count)
      running = @bench.wait_running(count)
      raise BenchHost::Failed, "only #{running} of #{count} clones running after #{@s.start_timeout}s" if running < count

      noop = []
      empty = []
      exits = []
      @s.noop_reps.times do |i|
        @bench.log("puppet apply at num_clones => #{count} again: timed no-op #{i + 1} of #{@s.noop_reps}, and an empty apply")
        secs, rc = @bench.apply_class(count)
        noop << secs
        exits << rc
        empty << time_empty_apply
      end
      noop_figures(count, noop, empty, exits)
    end

    def noop_figures(count, noop, empty, exits)
      noop_s = Float(Stats.fixed(Stats.median(noop)))
      empty_s = Float(Stats.fixed(Stats.median(empty)))
      target = count >= 100 ? "≤ #{NOOP_TARGET}" : '–'
      met = count >= 100 ? @bench.met_le(noop_s, NOOP_TARGET) : nil
      met = false unless exits.all?(&:zero?)
      @bench.fig("noop_apply_#{count}", "no-op puppet apply at #{count} clones (median of #{@s.noop_reps})", noop_s,
                 unit: 's', target: target, met: met, note: "#{Stats.quote(noop)}; exits: #{exits.join(' ')}")
      @bench.fig("empty_apply_#{count}", "puppet apply -e '' beside it, same fleet load (median of #{@s.noop_reps})", empty_s,
                 unit: 's', note: Stats.quote(empty))
      @bench.fig("noop_class_share_#{count}", "the class's own share at #{count} clones: no-op minus empty apply",
                 Float(Stats.fixed(noop_s - empty_s)),
                 unit: 's', note: 'medians')
    end

    # The wall seconds of `puppet apply -e ''`: Puppet's own start, facts and (empty)
    # catalog, without the class.
    def time_empty_apply
      t0 = @bench.now
      answer = @host.run('puppet', 'apply', '--detailed-exitcodes', '--color=false', '-e', '', timeout: @s.apply_timeout)
      secs = Stats.fixed(@bench.now - t0)
      File.write(@bench.record['empty.log'], answer.output)
      unless answer.exitstatus.zero?
        raise BenchHost::Failed, "puppet apply -e '' failed (exit #{answer.exitstatus}): #{answer.output.lines.last(5).join}"
      end

      secs
    end

    # New clones on the existing base, beside the running ones.
    def add_beside(running, last)
      batch = Batch.new(@bench, running + 1, last, @s.runinterval).run
      @bench.fig('per_clone_create_boot', "seconds per clone created and booted (#{batch.clones} new clones, #{running} running)",
                 batch.secs,
                 unit: 's', target: "≤ #{Batch::TARGET}", met: batch.met, note: batch.note)
    end

    # The rest in one apply, started in waves over RAMP_UP; the runs watched from its start.
    def grow_to_all
      @bench.log("puppet apply: the fleet grows to #{@s.clones} clones with ramp_up => #{@s.ramp_up}")
      t0 = @bench.now
      @checkins.watch_from(t0)
      secs, = @bench.apply_class(@s.clones, @s.ramp_up)
      running = @bench.wait_running(@s.clones)
      t2 = @bench.now
      @bench.helper_warnings
      @bench.fig('fleet_running', "large fleet: time to all #{@s.clones} running (last step: one apply, ramp_up #{@s.ramp_up} s)",
                 Float(Stats.fixed(t2 - t0)),
                 unit: 's', target: 'all running', met: running >= @s.clones,
                 note: "#{running} of #{@s.clones} running; apply #{secs} s")
      @checkins.window_from(t2)
      # The recorder's CPU is read over the check-in window, the whole fleet running.
      @recorder.start
    end

    def daemon_clones
      (1..@s.k).map { |d| "benchd#{d}" }
    end

    # K clones in daemon mode (idle memory).
    def extra_clones
      @bench.log("creating #{daemon_clones.join(' ')} (daemon)")
      daemon_clones.each { |d| @bench.create_clone(d, '--run-mode', 'daemon', '--runinterval', '3600') }
    end

    # Idle memory in daemon mode: after the agent's first run.
    def daemon_memory
      @bench.log("waiting (≤ #{DAEMON_FIRST_RUN} s) for the daemon-mode clones' first runs")
      ran = SandboxDriver.wait_for(timeout: DAEMON_FIRST_RUN, interval: 5) do
        # A failed look is no summary yet: asked again until the deadline.
        @host.run('bash', BenchHost::INSIDE, 'summaries', *daemon_clones).stdout.lines.size >= @s.k
      end
      raise BenchHost::Failed, "daemon-mode clones did not finish a first run within #{DAEMON_FIRST_RUN} s" unless ran

      sleep 15
      File.write(@bench.record['pss-daemon'], @host.inside_sh!('pss', *daemon_clones))
      readings = Pss.parse(File.read(@bench.record['pss-daemon']))
      avg = Pss.average_mib(readings)
      @bench.fig('pss_daemon', "idle memory per clone, daemon mode (PSS, avg of #{@s.k})", avg,
                 unit: 'MiB', target: "≤ #{PSS_DAEMON_TARGET}", met: @bench.met_le(avg, PSS_DAEMON_TARGET), note: Pss.note(readings))
    end

    # What the fleet asked of the server: the catalog size of the clones' last runs
    # and the server's compile time (its mean over every compile since it started,
    # which the fleet's runs dominate), from one report with the server's view.
    def catalog_figures
      answer = @host.run('clone-army', 'report', '--server', "https://#{@s.server_name}:8140", '--ca-cert',
                         @bench.sandbox_lib['SERVER_CA_CERT'], '--format', 'json')
      File.write(@bench.record['server-report.json'], answer.stdout)
      view = Readings.catalog(answer.stdout)
      resources = view && !view[:resources].empty? ? whole_or_fixed(Stats.median(view[:resources], min: 1)) : nil
      @bench.fig('catalog_resources', "catalog size of the fleet's last runs (median)", resources,
                 unit: 'resources', note: 'the summaries\' resources.total')
      @bench.fig('compile_mean', "the server's compile time (mean since it started)", view && view[:compile_mean],
                 unit: 'ms', note: view ? view[:note] : 'no server view')
    end

    # A whole count (a catalog's resources) stays whole.
    def whole_or_fixed(value)
      value == value.floor ? Integer(value) : Float(Stats.fixed(value))
    end
  end
end

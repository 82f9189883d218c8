# frozen_string_literal: true

require_relative 'checkin_figures'

module CloneArmyBench
  # BENCH_DRY_RUN=1: what a run with these settings would do, in order, as lines
  # to print; nothing runs. The names are the driver's own (Driver::NAME, ...).
  module Plan
    module_function

    # settings: Settings; names: { bench:, plain: }; out: the result's paths { json:, md:, raw:, page: }.
    def lines(settings, names, out)
      s = settings
      bench = names.fetch(:bench)
      plain = names.fetch(:plain)
      head = ["bench #{s.bench}, CLONES=#{s.clones} RUNINTERVAL=#{s.runinterval} RAMP_UP=#{s.ramp_up} " \
              "#{s.checkin? ? checkin_head(s) : "K=#{s.k} CPU_REPS=#{s.cpu_reps} NOOP_REPS=#{s.noop_reps}"} " \
              "SERVER_ADDR=#{s.server_addr}"]
      runs = ["sandbox.sh down #{plain}", "sandbox.sh down #{bench}", "sandbox.sh up #{bench}", "sandbox.sh server #{bench}",
              "puppet apply (in #{bench}): class clone_army, num_clones => 0, record => true"]
      runs += phases(s, bench, plain)
      head + runs.map { |r| "would run: #{r}" } +
        [out[:json], out[:md], "#{out[:raw]}/", out[:page]].map { |w| "would write: #{w}" } +
        ["sandbox.sh down #{plain}", "sandbox.sh down #{bench}"].map { |r| "would run: #{r}" }
    end

    # What the bench's own phases would run.
    def phases(settings, bench, plain)
      return growth(settings) if settings.growth?
      return checkin(settings) if settings.checkin?
      return cpu(settings, bench, plain) if settings.cpu?

      fleet(settings, bench, plain)
    end

    def checkin_head(settings)
      s = settings
      "SPLAY=#{s.splay} SAMPLE_EVERY=#{s.sample_every} WATCH_EVERY=#{s.watch_every} RUN_TIMEOUT=#{s.run_timeout}"
    end

    def checkin(settings)
      s = settings
      end_s = 2 * (s.runinterval + s.splay + CheckinFigures::GRACE)
      [
        "the runs watched every #{s.watch_every} s (clone-army report), CPU and the recorder's timeline sampled " \
        "every #{s.sample_every} s (inside.sh cpu-split), into the raw directory as they come",
        "puppet apply num_clones => #{s.clones}, runinterval => #{s.runinterval}, ramp_up => #{s.ramp_up}, " \
        "splay => #{s.splay} (and record_puppetdb where the suite has PuppetDB), until all run",
        "the check-ins watched until every clone's run of the next interval is in, at most #{end_s} s " \
        "after all run; the whole run ends by RUN_TIMEOUT (#{s.run_timeout} s)",
      ]
    end

    def growth(settings)
      settings.batches.map do |first, last|
        "inside.sh create-fleet … #{first} #{last} #{settings.grow_runinterval}; " \
          "clone-army clone start clone#{first}..clone#{last}; inside.sh wait-booted"
      end + ["inside.sh pss clone1..clone#{settings.clones}"]
    end

    def fleet(settings, bench, plain)
      s = settings
      step1, step2, step3, = s.fleet_steps
      noop = ->(n) { "puppet apply num_clones => #{n}, then #{s.noop_reps} timed no-op applies each beside puppet apply -e ''" }
      runs = [noop.call(step1)]
      runs << noop.call(step2) if step2 > step1
      if step3 > step2
        runs << "inside.sh create-fleet … #{step2 + 1} #{step3} #{s.runinterval}; clone-army clone start; inside.sh wait-booted"
      end
      runs + [
        "puppet apply num_clones => #{s.clones}, ramp_up => #{s.ramp_up} (the runs watched every 15 s from here)",
        "clone-army clone create benchd1..benchd#{s.k} (#{s.k} daemon-mode clones)",
        *cpu(s, bench, plain),
        "inside.sh pss (daemon and fleet clones); the check-ins counted for #{s.runinterval} s + 60 s; clone-army report --server",
        "the phasing read over the next interval (#{s.runinterval} s)",
      ]
    end

    # The CPU comparison, the fleet bench's and BENCH=cpu's.
    def cpu(settings, bench, plain)
      [
        'clone-army clone create benchcpu (manual)',
        "site.pp: clone_army::workload for benchcpu and #{plain}, an empty catalog for every other node",
        "sandbox.sh up #{plain}",
        "#{settings.cpu_reps} agent runs each in benchcpu with the fact cache and without (its facter.conf set aside), " \
        "on #{plain} and on #{bench}, after a warm-up each",
        "sandbox.sh down #{plain}",
      ]
    end
  end
end

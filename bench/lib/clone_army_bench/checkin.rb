# frozen_string_literal: true

require 'json'
require_relative 'checkin_figures'
require_relative 'cpu_sampler'
require_relative 'stats'
require_relative 'watcher'

module CloneArmyBench
  # BENCH=checkin: CLONES timer clones at RUNINTERVAL, made by one apply of the
  # class (ramp_up, splay, the recorder on the server and PuppetDB), watched
  # through their first interval and the next full one. Everything is written as
  # it comes, into the result's raw directory, which the run works in: the runs
  # the watcher sees, CPU samples and the recorder's timeline every SAMPLE_EVERY s,
  # and the times; the figures are CheckinFigures' of those files, so that
  # `bench.rb status` reads them while it runs. It ends once every clone's run of
  # the second interval is in, at the latest when the windows close (the driver
  # bounds the whole run by RUN_TIMEOUT).
  class Checkin
    POLL = 15

    def initialize(bench)
      @bench = bench
      @s = bench.settings
      @record = bench.record
    end

    def run
      File.write(@record['scale.json'], JSON.generate(@record.scale))
      apply_t0 = @bench.now
      File.write(@record['times'], "#{format('%.3f', apply_t0)}\n")
      @watcher = RunsWatcher.new(@bench.host, @record['runs'], apply_t0, period: @s.watch_every).start
      @sampler = CpuSampler.new(@bench, @s.sample_every).start
      grow(apply_t0)
      wait_for_the_runs
      finish('')
    end

    # For the teardown of a run that ended early (stopped, failed, timed out):
    # the figures so far.
    def partial
      finish('partial: the run ended early; ') if @watcher
    end

    private

    def grow(apply_t0)
      @bench.log("puppet apply: #{@s.clones} clones, runinterval #{@s.runinterval}, ramp_up #{@s.ramp_up}, splay #{@s.splay}")
      secs, = @bench.apply_class(@s.clones, @s.ramp_up, extra: extra_params)
      running = @bench.wait_running(@s.clones)
      @fleet_t0 = @bench.now
      File.write(@record['times'], "#{format('%.3f', apply_t0)} #{format('%.3f', @fleet_t0)}\n")
      @bench.fig('fleet_running', "time from the apply's start to all #{@s.clones} running (ramp_up #{@s.ramp_up} s)",
                 Float(Stats.fixed(@fleet_t0 - apply_t0)),
                 unit: 's', target: 'all running', met: running >= @s.clones,
                 note: "#{running} of #{@s.clones} running; apply #{secs} s")
      raise BenchHost::Failed, "only #{running} of #{@s.clones} clones running" if running < @s.clones
    end

    # The class's parameters beyond the fleet's: the splay, and PuppetDB for the
    # recorder where the suite has it.
    def extra_params
      lib = @bench.sandbox_lib
      params = ", splay => #{@s.splay}"
      params += ", record_puppetdb => 'https://#{@s.server_name}:#{lib['PUPPETDB_TLS_PORT']}'" if lib['SANDBOX_PUPPETDB'] == 'yes'
      params
    end

    def wait_for_the_runs
      stop_at = CheckinFigures.end_at(@fleet_t0, @record.scale)
      @bench.log("watching the check-ins until #{Time.at(stop_at).utc.strftime('%T')} UTC at the latest")
      until @bench.now >= stop_at
        sleep POLL
        break if all_in?
      end
    end

    def all_in?
      CheckinFigures.complete?(CheckinRaw.read(@record.raw), @record.scale, @bench.now)
    end

    # The figures as of now, which the times file keeps for make bench-derive.
    def finish(prefix)
      @watcher&.stop
      @sampler&.stop
      @watcher = nil
      upto = @bench.now
      times = File.read(@record['times']).split.first(2)
      File.write(@record['times'], "#{[*times, format('%.3f', upto)].join(' ')}\n") if times.size == 2
      CheckinFigures.figures(CheckinRaw.read(@record.raw), @record.scale, upto).each do |f|
        @bench.fig(f['key'], f['label'], f['value'], unit: f['unit'], target: f['target'], met: f['met'],
                                                     note: "#{prefix}#{f['note']}")
      end
    end
  end
end

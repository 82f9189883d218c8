# frozen_string_literal: true

require_relative 'readings'
require_relative 'stats'

module CloneArmyBench
  # The recorder's CPU (class clone_army's record => true): usage_usec of its
  # unit's cgroup from all clones running to the end of the check-in window, over
  # that wall time, as a share of one core. A restart between the readings (its
  # MainPID changed) leaves it not measured.
  class RecorderCpu
    UNIT = 'puppet-clone-army-record.service'
    KEY = 'recorder_cpu'
    # Below this % of one core.
    TARGET = 1

    Reading = Struct.new(:usec, :pid, :at)

    def initialize(bench)
      @bench = bench
    end

    # The first reading, all clones running.
    def start
      @start = reading
    end

    def started?
      !@start.nil?
    end

    # The figure from the first reading to now; note says over what window.
    def figure(note)
      finish = reading
      label = "the recorder's CPU with all #{@bench.settings.clones} clones running (its default period)"
      return not_measured(label, finish) unless comparable?(@start, finish)

      cpu = (finish.usec - @start.usec) / 1e6
      wall = finish.at - @start.at
      share = Float(Stats.fixed(cpu * 100 / wall))
      @bench.fig(KEY, label, share,
                 unit: '% of one core', target: "< #{TARGET}", met: share < TARGET,
                 note: "#{Stats.fixed(cpu)} CPU-s over #{Stats.fixed(wall)} s, #{note}")
    end

    # For the teardown: the figure so far, when the run ended inside its window.
    def partial
      return unless started? && !@bench.record.figure?(KEY)

      figure('partial: the run ended inside the check-in window')
    end

    private

    # Both readings taken, of the same recorder process.
    def comparable?(first, last)
      first.usec && last.usec && first.pid == last.pid && !['', '0', nil].include?(first.pid)
    end

    def not_measured(label, finish)
      a = @start
      @bench.fig(KEY, label, nil,
                 unit: '% of one core', target: "< #{TARGET}",
                 note: "not measured: usage_usec #{a.usec || '?'} -> #{finish.usec || '?'}, " \
                       "MainPID #{a.pid || '?'} -> #{finish.pid || '?'}")
    end

    def reading
      host = @bench.host
      usec = begin
        Readings.usec(host.run('bash', BenchHost::INSIDE, 'unit-cpu-usec', UNIT).stdout, UNIT)
      rescue Readings::Unreadable
        nil
      end
      pid = host.run('systemctl', 'show', '-p', 'MainPID', '--value', UNIT).stdout.strip
      Reading.new(usec, pid.empty? ? nil : pid, @bench.now)
    end
  end
end

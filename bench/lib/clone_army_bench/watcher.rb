# frozen_string_literal: true

require_relative 'readings'

module CloneArmyBench
  # From the last step's apply on, reads every clone's last run (`clone-army
  # report`) every PERIOD seconds (or `period`) in a thread of its own and appends
  # each run it sees to a file, a line each (Readings.watched_runs).
  # Intervals are at least 60 s, so no run is missed, and the figures made of
  # them are the runs' own end times, whenever the bench gets to read them.
  class RunsWatcher
    PERIOD = 15

    # host: BenchHost; path: the runs file; since: the apply's start (epoch seconds).
    def initialize(host, path, since, period: PERIOD)
      @host = host
      @period = period
      @path = path
      @since = since.floor
      @lock = Mutex.new
      @wake = ConditionVariable.new
      @stop = false
      @seen = {}
    end

    def start
      File.write(@path, '', mode: 'a')
      @thread = Thread.new { watch }
      @thread.report_on_exception = false
      self
    end

    # Stops it (within the poll under way) and waits for it.
    def stop
      return unless @thread

      @lock.synchronize do
        @stop = true
        @wake.signal
      end
      @thread.join
      @thread = nil
    end

    private

    def watch
      until @lock.synchronize { @stop }
        poll
        @lock.synchronize { @wake.wait(@lock, @period) unless @stop }
      end
    end

    # One reading; a failed one is skipped, the next comes a period later. A
    # clone's line is written when it differs from the last one written for it (a
    # new run, or the same run judged again), so the file grows with the runs, not
    # with the readings.
    def poll
      answer = @host.run('clone-army', 'report', '--format', 'json')
      lines = Readings.watched_runs(answer.stdout, @since).reject { |l| @seen[l.split.first] == l }
      lines.each { |l| @seen[l.split.first] = l }
      File.write(@path, lines.join, mode: 'a')
    rescue StandardError
      nil
    end
  end
end

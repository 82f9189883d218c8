# frozen_string_literal: true

require_relative 'bench_host'
require_relative 'readings'

module CloneArmyBench
  # BENCH=checkin's samples, every `every` seconds in a thread of its own: the CPU
  # the server's units, the clones and the machine have used (inside.sh
  # cpu-split), appended to raw/cpu as "<epoch> <name>=<usage_usec> ...", and a copy
  # of the recorder's timeline (raw/timeline.jsonl.gz, replaced whole), so that
  # `bench.rb status` can read both while the run goes on.
  class CpuSampler
    def initialize(bench, every)
      @bench = bench
      @every = every
      @lock = Mutex.new
      @wake = ConditionVariable.new
      @stop = false
    end

    def start
      @thread = Thread.new { sample_until_stopped }
      @thread.report_on_exception = false
      self
    end

    # Stops it (after the sample under way, with one last sample) and waits for it.
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

    def sample_until_stopped
      until @lock.synchronize { @stop }
        sample
        @lock.synchronize { @wake.wait(@lock, @every) unless @stop }
      end
      sample
    end

    # One sample; a failed reading is left out, the next comes a period later.
    def sample
      line = cpu_line
      File.write(@bench.record['cpu'], line, mode: 'a') if line
      @bench.keep_timeline
    rescue StandardError => e
      @bench.log("a sample could not be taken: #{e.message}")
    end

    # "<epoch> <name>=<usec> ..." of one cpu-split, or nil when it said nothing readable.
    def cpu_line
      answer = @bench.host.run('bash', BenchHost::INSIDE, 'cpu-split')
      pairs = answer.stdout.each_line.map(&:split).select { |w| w.size == 2 && Readings::COUNT.match?(w[1]) }
      return nil unless answer.success? && !pairs.empty?

      "#{format('%.3f', @bench.now)} #{pairs.map { |k, v| "#{k}=#{v}" }.join(' ')}\n"
    end
  end
end

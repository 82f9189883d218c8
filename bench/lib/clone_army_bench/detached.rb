# frozen_string_literal: true

require 'fileutils'
require 'json'
require 'rbconfig'
require_relative 'checkin_figures'
require_relative 'results'
require_relative 'settings'

module CloneArmyBench
  # A bench run in the background (make bench-checkin: `bench.rb start`), read
  # while it runs (`bench.rb status DIR`) and stopped (`bench.rb stop DIR`). DIR is
  # the run's raw directory, bench/results/<stamp>.raw (or bench/results/<stamp>),
  # which holds its PID file and its log beside the raw data it writes as it goes.
  module Detached
    BENCH_RB = File.expand_path('../../bench.rb', __dir__)
    PID_FILE = 'bench.pid'
    LOG = 'bench.log'
    # A stamp the run is given (BENCH_STAMP): the driver's own form, so that it names
    # a file under bench/results and nothing else.
    STAMP = %r{\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{6}Z\z}.freeze
    PID = %r{\A[1-9][0-9]{0,9}\n?\z}.freeze
    # Seconds `stop` waits for the teardown (the sandbox's poweroff is bounded well below).
    STOP_WAIT = 600

    module_function

    # Starts `bench.rb run` in a session of its own (setsid: no terminal to hang
    # it up), its output to DIR/bench.log, its PID in DIR/bench.pid; returns at
    # once. The settings are checked first, here, so a refusal is seen at once.
    def start(env, out, results:, stamp: Time.now.utc.strftime('%Y-%m-%dT%H%M%SZ'))
      Settings.from_env(env)
      raw = File.join(results, "#{stamp}.raw")
      FileUtils.mkdir_p(raw)
      log = File.open(File.join(raw, LOG), 'a')
      pid = Process.spawn(env.to_h.merge('BENCH_STAMP' => stamp), 'setsid', RbConfig.ruby, BENCH_RB, 'run',
                          in: File::NULL, out: log, err: log)
      log.close
      Process.detach(pid)
      File.write(File.join(raw, PID_FILE), "#{pid}\n")
      out.puts("started: PID #{pid} (#{File.join(raw, PID_FILE)})", "log: #{File.join(raw, LOG)}",
               "figures so far: ruby bench/bench.rb status #{raw}", "stop it: ruby bench/bench.rb stop #{raw}",
               "result: #{File.join(results, stamp)}.json and .md once it ends")
      0
    end

    # The raw directory an argument names: DIR.raw, or DIR/STAMP(.json) made DIR.raw.
    def raw_dir(arg)
      dir = arg.chomp('/').sub(%r{\.(json|md)\z}, '')
      dir.end_with?('.raw') ? dir : "#{dir}.raw"
    end

    # The PID of the run DIR names while it runs (its PID file names a live
    # `bench.rb run`), else nil.
    def running_pid(raw)
      text = File.read(File.join(raw, PID_FILE))
      return nil unless PID.match?(text)

      pid = Integer(text, 10)
      cmdline = File.binread("/proc/#{pid}/cmdline").split("\0")
      cmdline.include?(BENCH_RB) && cmdline.last == 'run' ? pid : nil
    rescue Errno::ENOENT, Errno::ESRCH
      nil
    end

    # Prints the figures so far (CheckinFigures' of the raw data as it stands).
    def status(arg, out, now: Time.now.to_f)
      raw = raw_dir(arg)
      raise ArgumentError, "#{raw}: no such run directory" unless File.directory?(raw)

      pid = running_pid(raw)
      scale = JSON.parse(File.read(File.join(raw, 'scale.json')))
      result = "#{raw.delete_suffix('.raw')}.json"
      state = pid ? "running (PID #{pid})" : ended(result)
      doc = Results.document(started: File.basename(raw, '.raw'), finished: '', status: state, scale: scale,
                             figures: CheckinFigures.figures(CheckinRaw.read(raw), scale, upto(raw, pid, now)))
      out.write(Results.markdown(doc))
      out.puts('', "log: #{File.join(raw, LOG)}")
      0
    rescue Errno::ENOENT => e
      raise ArgumentError, "#{raw}: not a checkin run's directory yet (#{e.message})"
    end

    def ended(result)
      return 'not running; no result written (killed?)' unless File.file?(result)

      "ended: #{JSON.parse(File.read(result))['status']}"
    end

    # Figures of a run that ended are as of when it made them (or its last CPU
    # sample, when it was killed before), not of now.
    def upto(raw, pid, now)
      return now if pid

      data = CheckinRaw.read(raw)
      last = CheckinRaw.cpu(data.cpu).last
      CheckinRaw.figures_at(data.times) || (last ? last[0] : now)
    end

    # SIGTERM to the run's PID (its PID file's, a live `bench.rb run` only): the
    # run's own teardown writes what it measured and takes its sandboxes down.
    # Waits for it, at most STOP_WAIT s.
    def stop(arg, out, wait: STOP_WAIT)
      raw = raw_dir(arg)
      pid = running_pid(raw)
      unless pid
        out.puts("#{raw}: not running")
        return 1
      end
      Process.kill('TERM', pid)
      out.puts("sent SIGTERM to PID #{pid}; its teardown is under way (log: #{File.join(raw, LOG)})")
      deadline = Time.now + wait
      sleep 2 while running_pid(raw) && Time.now < deadline
      gone = running_pid(raw).nil?
      out.puts(gone ? 'it has ended' : "still running after #{wait} s")
      gone ? 0 : 1
    end
  end
end

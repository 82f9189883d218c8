# frozen_string_literal: true

require 'etc'
require 'fileutils'
require 'tmpdir'
require 'zlib'
require_relative '../../../sandbox/driver'
require_relative 'bench_host'
require_relative 'checkin'
require_relative 'cpu_comparison'
require_relative 'fleet'
require_relative 'growth'
require_relative 'pages'
require_relative 'plan'
require_relative 'readings'
require_relative 'record'
require_relative 'settings'

module CloneArmyBench
  # `bench.rb run` (make bench): boots the sandbox host BenchHost::NAME with
  # Puppet Server on SERVER_ADDR, applies the class (with its recorder), runs the
  # bench the settings name (Fleet or Growth), writes the result with its raw
  # readings and the page of the recorded run, and tears down on exit, on failure
  # and on INT, TERM or HUP too: `sandbox.sh down` of its two sandboxes, nothing else.
  class Driver
    REPO = File.expand_path('../../..', __dir__)
    RESULTS = File.join(REPO, 'bench', 'results')
    HELPER = File.join(REPO, 'files', 'clone-army')
    # The exit of a run ended by a signal.
    INTERRUPTED = 130

    attr_reader :settings, :host, :record, :base

    # host and results stand in for the sandboxes and bench/results in the specs.
    def initialize(env: ENV, out: $stdout, stamp: Time.now.utc.strftime('%Y-%m-%dT%H%M%SZ'), host: nil, results: RESULTS)
      @env = env
      @out = out
      @stamp = stamp
      @host = host
      @results = results
    end

    # The exit status: 0, 1 (failed), 2 (a setting refused), 130 (interrupted).
    def run
      @settings = Settings.from_env(@env)
      @record = Record.new(results: @results, stamp: @stamp)
      return dry_run if @settings.dry_run

      preflight
      measure
    rescue Refused, BenchHost::Failed => e
      log("error: #{e.message}")
      e.is_a?(Refused) ? 2 : 1
    end

    def log(message)
      SandboxDriver.log('bench', message)
    end

    def now
      Time.now.to_f
    end

    # Adds a figure to the record (Results.figure's fields; no target is '–', and
    # with no target nothing is met or not) and logs it.
    def fig(key, label, value, unit:, target: '–', met: nil, note: '')
      @record.fig(
        key: key, label: label, value: value, unit: unit, target: target, met: met, note: note,
      )
      log("#{label}: #{value.nil? ? 'null' : value} #{unit} (target: #{target}; met: #{met.nil? ? 'null' : met})")
    end

    # Met when there is a value and it is at most the target.
    def met_le(value, target)
      !value.nil? && value <= target
    end

    # sandbox/lib.sh's settings the bench shares with the sandbox scripts
    # (RECORD_TIMELINE, SERVER_CA_CERT), read from it, so they live there alone.
    def sandbox_lib
      @sandbox_lib ||= SandboxDriver.lib('RECORD_TIMELINE', 'SERVER_CA_CERT', 'SANDBOX_PUPPETDB', 'PUPPETDB_TLS_PORT', 'SERVER_ENVIRONMENT')
    rescue RuntimeError => e
      raise BenchHost::Failed, e.message
    end

    # The class with count clones (and ramp_up), timed: [wall seconds as quoted, exit
    # (0 no change, 2 changes)]; any other exit fails the run.
    # extra: more of the class's parameters (", name => value ..."), the bench's own.
    def apply_class(count, ramp_up = 0, extra: '')
      s = @settings
      manifest = "class { 'clone_army': server => '#{s.server_name}', num_clones => #{count}, run_mode => 'timer', " \
                 "runinterval => #{s.runinterval}, ramp_up => #{ramp_up}, record => true#{extra} }"
      t0 = now
      answer = @host.run('puppet', 'apply', '--detailed-exitcodes', '--color=false', '-e', manifest, timeout: s.apply_timeout)
      secs = Stats.fixed(now - t0)
      File.write(@record['apply.log'], answer.output)
      unless [0, 2].include?(answer.exitstatus)
        warn answer.output.lines.last(30).join
        raise BenchHost::Failed, "puppet apply with num_clones => #{count} failed (exit #{answer.exitstatus})"
      end
      [secs, answer.exitstatus]
    end

    # Polls (bounded by START_TIMEOUT) until count fleet clones run; how many do.
    def wait_running(count)
      running = nil
      SandboxDriver.wait_for(timeout: @settings.start_timeout, interval: 2) do
        running = begin
          Readings.running_count(@host.run('clone-army', 'clone', 'list', '--format', 'json').stdout)
        rescue Readings::Unreadable
          nil
        end
        running.nil? || running >= count
      end
      running or raise BenchHost::Failed, 'could not list the clones'
    end

    # The helper's warnings so far (one per call), once each, the commonest first.
    def helper_warnings
      path = @record['helper.err']
      return unless File.exist?(path)

      File.readlines(path).tally.sort_by { |line, n| [-n, line] }.first(10)
          .each { |line, n| warn format('%<n>7d %<line>s', n: n, line: line) }
    end

    # Writes the result (and the raw readings and the page); prints the table unless quiet.
    def write_results(status, quiet: false)
      table = @record.write(status)
      @out.write(table) unless quiet
      log("wrote #{@record.json} and #{@record.md}")
      write_page || log("no page of the recorded run: the recorder's timeline could not be read")
    end

    # The recorder's timeline as it is now, compressed into the raw data (replaced
    # whole); its path, or nil when it could not be read.
    def keep_timeline
      FileUtils.mkdir_p(@record.raw)
      timeline = File.join(@record.raw, 'timeline.jsonl.gz')
      answer = @host.run('gzip', '-c', sandbox_lib['RECORD_TIMELINE'])
      return nil unless answer.success?

      File.binwrite("#{timeline}.tmp", answer.stdout)
      File.rename("#{timeline}.tmp", timeline)
      timeline
    end

    # A clone of the bench's own (not the fleet's), made and started by the helper
    # in the sandbox, with the run mode flags given.
    def create_clone(name, *mode)
      @host.run!('clone-army', 'clone', 'create', name, '--base', @base, '--server', @settings.server_name,
                 '--certname', "#{name}.#{BenchHost::DOMAIN}", *mode, '--start', err: @record['helper.err'])
    end

    private

    def dry_run
      @out.puts(Plan.lines(@settings, { bench: BenchHost::NAME, plain: BenchHost::PLAIN }, @record.paths))
      0
    end

    def preflight
      raise BenchHost::Failed, 'must run as root (debootstrap, mounts and systemd-nspawn need it)' unless Process.uid.zero?
      raise BenchHost::Failed, "#{HELPER} is missing: run make build (make bench does)" unless File.executable?(HELPER)

      sandbox_lib
    end

    # checkin writes as it goes, into the result's raw directory; the others
    # measure in a private one and keep their raw readings at the end.
    def measure
      @host ||= BenchHost.new(@settings, REPO)
      return measure_in(@record.raw) if @settings.checkin?

      Dir.mktmpdir('clone-army-bench') { |work| measure_in(work) }
    end

    def measure_in(work)
      FileUtils.mkdir_p(work)
      @record = Record.new(results: @results, stamp: @stamp, work: work)
      guarded { bench }
    end

    # Runs the block with the teardown guaranteed: INT, TERM and HUP end the run
    # (exit 130) through the same teardown as a failure.
    def guarded
      previous = ['INT', 'TERM', 'HUP'].to_h { |sig| [sig, trap(sig) { raise Interrupt, "SIG#{sig}" }] }
      finished = false
      rc = 1
      begin
        watchdog = run_timeout
        yield
        finished = true
        rc = 0
      rescue Interrupt
        rc = INTERRUPTED
      rescue StandardError => e
        log("error: #{e.message}")
      ensure
        watchdog&.kill
        previous.each { |sig, handler| trap(sig, handler || 'DEFAULT') }
        rc = teardown(rc, finished)
      end
      rc
    end

    # checkin: RUN_TIMEOUT bounds the whole run; at its end the run ends as if
    # stopped (SIGTERM to itself), through the teardown. The thread, or nil.
    def run_timeout
      return nil unless @settings.checkin?

      bound = @settings.run_timeout
      pid = Process.pid
      Thread.new do
        sleep bound
        log("RUN_TIMEOUT (#{bound} s) reached: ending the run")
        Process.kill('TERM', pid)
      end
    end

    def bench
      s = @settings
      s.scale.each { |k, v| @record.meta(k, v) }
      @record.meta('host', { 'kernel' => Etc.uname[:release], 'cpus' => Etc.nprocessors,
                             'mem_total_kib' => File.read('/proc/meminfo')[%r{^MemTotal:\s+(\d+)}, 1].to_i })
      @host.down(BenchHost::PLAIN) # leftovers of a killed run
      @host.down(BenchHost::NAME)
      @host.sandbox!('up')
      @host.sandbox!('server')
      log('puppet apply: the base and the helper (num_clones => 0)')
      secs, = apply_class(0)
      fig('base_apply', 'first apply: base built, helper installed', Float(secs),
          unit: 's', note: 'debootstrap of the base included')
      @base = Readings.base_name(@host.run!('clone-army', 'base', 'list', '--format', 'json'))
      @phases = phases
      @phases.run
      write_results('complete')
    end

    def phases
      return Growth.new(self) if @settings.growth?
      return Checkin.new(self) if @settings.checkin?
      return CpuComparison.new(self) if @settings.cpu?

      Fleet.new(self)
    end

    # What was measured is written (a failed run's too), then both sandboxes go
    # down, by sandbox.sh; the exit status, 1 when anything was left behind.
    def teardown(status, finished)
      unless finished
        log("failed (exit #{status}); writing what was measured")
        keep_partial(status)
      end
      log("tearing down sandboxes #{BenchHost::PLAIN} and #{BenchHost::NAME}")
      [BenchHost::PLAIN, BenchHost::NAME].each { |name| status = 1 unless @host.down(name) }
      [BenchHost::NAME, BenchHost::PLAIN].each do |name|
        next unless SandboxDriver.mounts_left?(name)

        log("warning: mounts of sandbox #{name} are left")
        status = 1
      end
      status
    end

    def keep_partial(status)
      @phases.partial if @phases.respond_to?(:partial)
    rescue StandardError => e
      log("the partial figures could not be read: #{e.message}")
    ensure
      begin
        write_results("failed (exit #{status})")
      rescue StandardError => e
        log("the result could not be written: #{e.message}")
      end
    end

    # The recorder's timeline, kept with the raw data (compressed), and the page of
    # the run drawn from it by the helper, next to the JSON. The timeline is read
    # through the sandbox's own gzip, so no path inside the sandbox is followed from here.
    def write_page
      timeline = keep_timeline or return false
      samples = Readings.page_samples(Pages.page(timeline, @record.page, HELPER))
      log("wrote #{@record.page} (#{samples} samples)")
      true
    rescue RuntimeError => e
      log(e.message)
      false
    end
  end
end

# frozen_string_literal: true

# The end-to-end suite's harness. Run on the outer machine, as root:
#
#   rspec spec/acceptance            (one suite; `make acceptance` runs it for
#                                     each Debian suite side by side, through
#                                     scripts/acceptance.sh, after `make build`)
#
# This machine's PID 1 is not systemd, so the module is applied inside a
# *sandbox host* (sandbox/sandbox.sh): a Debian rootfs (SANDBOX_SUITE) booted
# with `systemd-nspawn -b`, with this checkout bound read-only at its modulepath
# and Debian's Puppet Server running inside on SERVER_ADDR:8140. One sandbox and
# one server serve the whole suite: up in before(:suite), down in
# after(:suite), and down again from at_exit, so an error, a failed example or
# an interrupt never leaves a container, a JVM or a mount behind.
#
# Environment:
#   SANDBOX_SUITE  Debian suite of the sandbox host (sandbox/lib.sh holds the list and the default)
#   SANDBOX_NAME   sandbox to use (default: acceptance)
#   MODULE_DIR     module checkout to test (default: this one); needs files/clone-army
#   SERVER_ADDR    loopback address of the sandbox's Puppet Server (default
#                  127.0.0.1; sandbox.sh reads it too), so suites can run side
#                  by side, as scripts/acceptance.sh runs them
#   KEEP_SANDBOX=1 leave it running after the suite, to look around:
#                  bash sandbox/sandbox.sh exec acceptance bash
#                  bash sandbox/sandbox.sh down acceptance

require 'fileutils'
require 'io/wait'
require 'json'
require 'open3'
require 'set'
require 'tmpdir'
require 'zlib'
require 'rspec'
require_relative '../../lib/puppet_x/clone_army/schema'
require_relative '../../sandbox/driver'

# The suite's sandbox host, through the sandbox driver (sandbox/driver.rb): the
# one sandbox and server the examples share, and the suite's defaults for them.
module SandboxHarness
  REPO = File.expand_path('../..', __dir__)
  SANDBOX_SH = SandboxDriver::SANDBOX_SH
  NAME = ENV.fetch('SANDBOX_NAME', 'acceptance')
  # The module bound into the sandbox (sandbox.sh reads the same variable).
  MODULE_DIR = ENV.fetch('MODULE_DIR', REPO)
  # The name the clones use for the server (the sandbox's /etc/hosts maps it to SERVER_ADDR).
  SERVER = 'puppet'
  # A second name of the same server (sandbox.sh's SERVER_ALIASES: /etc/hosts and dns_alt_names).
  SERVER_ALIAS = 'puppet2'
  SERVER_ADDR = ENV.fetch('SERVER_ADDR', '127.0.0.1')
  # The clones' runinterval in the suite: the shortest the helper takes (its
  # runinterval range, as the module's schema.json carries it), because the
  # first run of clone i of N comes (i - 1) * runinterval / N after its start
  # (phasing), and most examples wait for a run.
  RUNINTERVAL = PuppetX::CloneArmy::Schema.range(:runinterval).min
  # One agent run asked of a clone (through clone-army exec). Its daemon runs
  # every RUNINTERVAL, so the run asked for may meet one in progress: it waits
  # for that run's lock (checking every second, up to maxwaitforlock, a
  # minute by default) instead of skipping with exit 1.
  AGENT_RUN = ['puppet', 'agent', '-t', '--waitforlock', '1'].freeze
  # Debian's Puppet Server: server-var-dir /var/lib/puppetserver, cadir /etc/puppet/puppetserver/ca.
  REPORT_DIR = '/var/lib/puppetserver/reports'
  SIGNED_DIR = '/etc/puppet/puppetserver/ca/signed'
  HELPER = '/usr/local/sbin/clone-army'
  # Where sandbox.sh binds MODULE_DIR inside the sandbox (read-only, on the base modulepath).
  MODULE_BOUND = SandboxDriver::MODULE_BOUND
  # The Puppet Server's environment, whose own modules/ comes before the base
  # modulepath: a module installed there is the one the server compiles with.
  ENVIRONMENT = SandboxDriver.lib('SERVER_ENVIRONMENT').fetch('SERVER_ENVIRONMENT').freeze
  ENVIRONMENT_MODULE = "#{ENVIRONMENT}/modules/clone_army".freeze

  Result = SandboxDriver::Result

  module_function

  def log(message)
    SandboxDriver.log('acceptance', message)
  end

  # sandbox.sh VERB NAME, its output streamed to our stderr; raises on failure.
  def sandbox!(verb, name = NAME)
    log "sandbox.sh #{verb} #{name}"
    SandboxDriver.verb!(verb, name)
  end

  # Runs argv inside the sandbox host, bounded by timeout seconds; never raises
  # on a non-zero exit (the caller asserts on the Result).
  def on_sandbox(*argv, timeout: 300, sandbox: NAME)
    SandboxDriver.exec(sandbox, *argv, timeout: timeout)
  end

  # Like on_sandbox, but a non-zero exit is an error.
  def on_sandbox!(*argv, timeout: 300, sandbox: NAME)
    result = on_sandbox(*argv, timeout: timeout, sandbox: sandbox)
    raise "inside sandbox #{sandbox}: #{result}" unless result.exitstatus.zero?

    result
  end

  # `puppet apply` of a manifest inside the sandbox, with --detailed-exitcodes.
  def apply(manifest, timeout: 1200, sandbox: NAME)
    log "puppet apply -e #{manifest.inspect} (in sandbox #{sandbox})"
    started = Time.now
    result = on_sandbox('puppet', 'apply', '--detailed-exitcodes', '--color=false', '-e', manifest,
                        timeout: timeout, sandbox: sandbox)
    log format('puppet apply exited %<rc>s after %<s>.0f s', rc: result.exitstatus, s: Time.now - started)
    result
  end

  # Polls the block every interval seconds until it returns a truthy value,
  # at most timeout seconds; the value, or nil on timeout (SandboxDriver.wait_for).
  def wait_for(timeout:, interval: 3, &block)
    SandboxDriver.wait_for(timeout: timeout, interval: interval, &block)
  end

  # A path under MODULE_DIR as the sandbox sees it (through the bind).
  def inside(path)
    full = File.expand_path(path)
    raise "#{full} is not under #{MODULE_DIR}, so the sandbox cannot see it" unless full.start_with?("#{MODULE_DIR}/")

    File.join(MODULE_BOUND, full.delete_prefix("#{MODULE_DIR}/"))
  end

  # This sandbox's own directory for files the suite makes on this machine,
  # under MODULE_DIR (so the sandbox sees it through the bind): suites running
  # side by side share the checkout, not this directory.
  def work_dir
    File.join(MODULE_DIR, 'target', 'acceptance', NAME).tap { |dir| FileUtils.mkdir_p(dir) }
  end

  # `make dist` of MODULE_DIR (scripts/dist.sh): the release files as users get
  # them, built from what git tracks there. Returns their paths on this machine.
  def dist!
    out = File.join(work_dir, 'dist')
    log "scripts/dist.sh into #{out}"
    ok = system({ 'DIST_DIR' => out }, 'bash', File.join(MODULE_DIR, 'scripts', 'dist.sh'),
                chdir: MODULE_DIR, out: $stderr, err: $stderr)
    raise 'scripts/dist.sh failed' unless ok

    meta = JSON.parse(File.read(File.join(MODULE_DIR, 'metadata.json')))
    helper = Dir[File.join(out, "clone-army-#{meta['version']}-*-linux")].first or raise "no bare helper in #{out}"
    { module: File.join(out, "#{meta['name']}-#{meta['version']}.tar.gz"), helper: helper,
      helper_sha256: File.read("#{helper}.sha256").split.first }
  end

  # --- lifecycle -------------------------------------------------------------

  def up
    raise 'the acceptance suite must run as root (it boots a systemd-nspawn sandbox host)' unless Process.uid.zero?

    helper = File.join(MODULE_DIR, 'files', 'clone-army')
    raise "#{helper} is missing: run `make build` first (make acceptance does)" unless File.executable?(helper)

    @torn_down = false
    started = Time.now
    sandbox!('down') # leftovers of an earlier run that was killed hard
    sandbox!('up')
    sandbox!('server')
    log format('sandbox %<n>s and its Puppet Server are up after %<s>.0f s', n: NAME, s: Time.now - started)
  end

  # An orderly reboot of the sandbox host keeping its state (sandbox.sh restart).
  def restart
    started = Time.now
    sandbox!('restart')
    log format('sandbox %<n>s restarted, its Puppet Server answering, after %<s>.0f s', n: NAME, s: Time.now - started)
  end

  # A second load host: sandbox NAME-b, booted beside the first with the same
  # SERVER_ADDR (so `puppet` is the first one's server) and no server of its
  # own; taken down by down_second_host, or with the suite.
  SECOND = "#{NAME}-b".freeze

  def up_second_host
    @second_up = true
    sandbox!('down', SECOND)
    sandbox!('up', SECOND)
  end

  def down_second_host
    return unless @second_up

    @second_up = false
    sandbox!('down', SECOND)
  end

  # Where sandbox NAME's /var/lib/puppet-clone-army is, seen from this machine
  # (sandbox.sh binds its data directory there).
  def state_dir_outside(name)
    File.join(SandboxDriver.state_dir(name), 'data')
  end

  def down
    down_second_host
    return if @torn_down

    @torn_down = true
    if ENV['KEEP_SANDBOX'] == '1'
      log "KEEP_SANDBOX=1: leaving sandbox #{NAME} up; take it down with: bash sandbox/sandbox.sh down #{NAME}"
      return
    end
    sandbox!('down')
  end
end

# What the examples ask the sandbox host: certnames, the helper's listing,
# machines, certificates and reports on the server.
module SandboxProbes
  include SandboxHarness

  HELPER = SandboxHarness::HELPER
  SIGNED_DIR = SandboxHarness::SIGNED_DIR
  REPORT_DIR = SandboxHarness::REPORT_DIR

  # The certname of the sandbox host itself; clones are <clone>.<this>.
  def host_certname
    @host_certname ||= on_sandbox!('puppet', 'config', 'print', 'certname').stdout.strip
  end

  # The helper's bulk listing, decoded (the protocol's envelope).
  def clone_list
    result = on_sandbox(HELPER, 'clone', 'list', '--format', 'json', timeout: 60)
    doc = JSON.parse(result.stdout)
    raise "clone-army clone list failed: #{result}" unless doc['ok'] && result.exitstatus.zero?

    doc.fetch('result').fetch('clones')
  rescue JSON::ParserError
    raise "clone-army clone list printed no JSON: #{result}"
  end

  # Names in `machinectl list` (registered, i.e. running, machines).
  def machines
    on_sandbox!('machinectl', 'list', '--no-legend', '--no-pager', timeout: 60)
      .stdout.lines.map { |l| l.split.first }.compact
  end

  def signed_certs
    on_sandbox!('find', SIGNED_DIR, '-maxdepth', '1', '-name', '*.pem', '-printf', '%f\n', timeout: 60)
      .stdout.lines.map { |l| l.strip.delete_suffix('.pem') }
  end

  # certname => newest report file name, for every node that sent a report.
  def reports
    out = on_sandbox('find', REPORT_DIR, '-mindepth', '2', '-maxdepth', '2', '-name', '*.yaml',
                     '-printf', '%h %f\n', timeout: 60).stdout
    out.lines.each_with_object({}) do |line, acc|
      dir, file = line.split
      certname = File.basename(dir)
      acc[certname] = [acc[certname], file].compact.max
    end
  end

  # Whether the sandbox's server stores into PuppetDB: its rootfs was built with
  # it (sandbox/lib.sh decides per suite and records the packages in the rootfs).
  def puppetdb?
    info = on_sandbox!('cat', '/etc/clone-army-sandbox.info', timeout: 30).stdout
    info[%r{^packages=(.*)$}, 1].to_s.split.include?('puppetdb')
  end

  # GET /pdb/query/v4/ENTITY from the sandbox's PuppetDB (TLS, the server's own
  # certificate as the client's), decoded.
  def puppetdb_query(entity)
    ssl = '/var/lib/puppet/ssl'
    result = on_sandbox!('curl', '-fsS', '--max-time', '30', '--cacert', "#{ssl}/certs/ca.pem",
                         '--cert', "#{ssl}/certs/#{SandboxHarness::SERVER}.pem",
                         '--key', "#{ssl}/private_keys/#{SandboxHarness::SERVER}.pem",
                         "https://#{SandboxHarness::SERVER}:8081/pdb/query/v4/#{entity}", timeout: 60)
    JSON.parse(result.stdout)
  end

  # `class { 'clone_army': ... }` with the suite's server and the given parameters.
  def class_manifest(**params)
    params = { server: SandboxHarness::SERVER, runinterval: SandboxHarness::RUNINTERVAL }.merge(params)
    body = params.map { |k, v| "#{k} => #{v.is_a?(String) ? "'#{v}'" : v}" }.join(', ')
    "class { 'clone_army': #{body} }"
  end

  # systemctl show -p PROPERTY --value UNIT, inside the sandbox.
  def unit_property(unit, property)
    on_sandbox!('systemctl', 'show', '-p', property, '--value', unit, timeout: 60).stdout.strip
  end

  # What the sandbox host says about one clone's service: state and MainPID.
  def clone_unit(clone)
    { active: unit_property("puppet-clone-army@#{clone}.service", 'ActiveState'),
      pid: unit_property("puppet-clone-army@#{clone}.service", 'MainPID').to_i }
  end

  # The overlay mounts under /var/lib/machines in the sandbox's mount namespace.
  def machine_mounts
    on_sandbox!('cat', '/proc/self/mountinfo', timeout: 60).stdout.lines
                                                           .map { |l| l.split[4] }
                                                           .select { |m| m.start_with?('/var/lib/machines/') }
  end

  # Every trace a removed clone could leave on the sandbox host, one line each
  # (empty when it is gone completely): paths, mounts, units, machines. An
  # instance of the (shared, still present) template that systemd keeps in
  # memory as `loaded inactive dead` after the removal is not a trace: no file
  # of the clone is left, and nothing runs or is mounted.
  def clone_traces(clone)
    script = <<~'SH'
      c=$1
      for p in /var/lib/machines/$c /var/lib/puppet-clone-army/$c-overlay /var/lib/puppet-clone-army/$c-workdir \
               /var/lib/puppet-clone-army/$c-config /etc/systemd/nspawn/$c.nspawn \
               /etc/systemd/system/var-lib-machines-$c.mount                /etc/systemd/system/puppet-clone-army.target.wants/puppet-clone-army@$c.service                /etc/systemd/system/puppet-clone-army@$c.service.d; do
        if [ -e "$p" ] || [ -L "$p" ]; then echo "path: $p"; fi
      done
      awk -v m="/var/lib/machines/$c" '$5 == m { print "mounted: " m }' /proc/self/mountinfo
      systemctl list-units --all --plain --no-legend --no-pager "puppet-clone-army@$c.service" "var-lib-machines-$c.mount" |
        grep -v -e ' not-found ' -e ' inactive  *dead ' | sed 's/^/unit: /'
      machinectl list --no-legend --no-pager | awk -v c="$c" '$1 == c { print "machine: " c }'
      true
    SH
    on_sandbox!('sh', '-c', script, 'sh', clone, timeout: 60).stdout.lines.map(&:strip)
  end

  # Runs argv inside a running clone (systemd-run over machined), its output and exit.
  # Whether the clone's systemd answers on its own bus, which `systemd-run
  # --machine` (in_clone) goes through: a registered machine may not have
  # started its D-Bus yet ("Failed to connect to system scope bus").
  def bus_up?(clone)
    state = on_sandbox('systemctl', "--machine=#{clone}", 'is-system-running', timeout: 30).stdout.strip
    ['initializing', 'starting', 'running', 'degraded', 'maintenance'].include?(state)
  end

  def in_clone(clone, *argv, timeout: 120)
    on_sandbox('systemd-run', "--machine=#{clone}", '--wait', '--pipe', '--quiet', '--collect', '--', *argv,
               timeout: timeout)
  end

  def base_json
    JSON.parse(on_sandbox!('sh', '-c', 'cat /var/lib/puppet-clone-army/*/etc/clone-army/base.json',
                           timeout: 60).stdout)
  end

  # Epoch seconds of the newest report from certname on the server (0 when none).
  def newest_report_time(certname)
    out = on_sandbox('find', "#{REPORT_DIR}/#{certname}", '-name', '*.yaml', '-printf', '%T@\n', timeout: 60).stdout
    out.lines.map(&:to_f).max || 0
  end

  def sandbox_now
    on_sandbox!('date', '+%s', timeout: 30).stdout.to_i
  end

  # Waits (bounded) until every certname has a signed certificate and a report
  # on the server newer than `since` (epoch seconds); returns the certnames
  # still missing either (empty when all checked in).
  def wait_for_checkins(certnames, since, timeout:)
    missing = certnames
    wait_for(timeout: timeout, interval: 5) do
      signed = signed_certs
      missing = certnames.reject { |c| signed.include?(c) && newest_report_time(c) > since }
      missing.empty?
    end
    missing
  end

  # What a failing example prints to say why: the fleet as the helper,
  # systemd and the clones' journals see it.
  def diagnostics
    [
      on_sandbox(HELPER, 'clone', 'list', '--format', 'json', timeout: 60),
      on_sandbox('machinectl', 'list', '--no-pager', timeout: 60),
      on_sandbox('systemctl', 'list-units', '--no-pager', '--all', 'puppet-clone-army*', 'var-lib-machines-*',
                 timeout: 60),
      on_sandbox('journalctl', '--no-pager', '-n', '60', '-u', 'puppet-clone-army@*', timeout: 60),
      on_sandbox('ls', '-l', SIGNED_DIR, REPORT_DIR, timeout: 60),
    ].map(&:to_s).join("\n")
  rescue StandardError => e
    "(diagnostics failed: #{e.message})"
  end
end

# A static HTTP server on a loopback address (python3 -m http.server), serving
# one directory, for helper_source over http: the sandbox shares this
# machine's network namespace, so it reaches the address. Started and stopped
# by its PID; its request log is kept to show what was fetched.
class LoopbackHttp
  PYTHON = '/usr/bin/python3'

  attr_reader :url, :pid

  # Serves `dir`; logs to `log` (outside `dir`, so it is not served).
  def initialize(dir, address, log:)
    @dir = dir
    @address = address
    @log = log
  end

  # Binds port 0 (any free port) and reads the one it got from the server's
  # first line ("Serving HTTP on 127.0.0.12 port 43211 ...").
  def start(timeout: 30)
    out_r, out_w = IO.pipe
    @pid = Process.spawn(PYTHON, '-u', '-m', 'http.server', '--bind', @address, '--directory', @dir, '0',
                         in: File::NULL, out: out_w, err: [@log, 'w'])
    out_w.close
    line = out_r.wait_readable(timeout) && out_r.gets
    out_r.close
    port = line.to_s[%r{ port (\d+) }, 1] or raise "http.server said #{line.inspect}, not its port (log: #{requests})"
    @url = "http://#{@address}:#{port}"
    SandboxHarness.log "http.server (pid #{@pid}) serves #{@dir} at #{@url}"
    self
  rescue StandardError
    stop
    raise
  end

  def stop
    return unless @pid

    begin
      Process.kill('TERM', @pid)
      Process.wait(@pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end
    SandboxHarness.log "http.server (pid #{@pid}) stopped"
    @pid = nil
  end

  # What it logged: one line per request ("GET /clone-army HTTP/1.1" 200 -).
  def requests
    File.exist?(@log) ? File.read(@log) : ''
  end
end

# Debian's headless Chromium on this machine, for pages the helper writes.
module Chromium
  BINARY = '/usr/bin/chromium'
  # --no-sandbox: Chromium's own sandbox needs user namespaces root does not get here.
  FLAGS = ['--headless', '--no-sandbox', '--disable-gpu'].freeze

  module_function

  def run!(*argv)
    out, err, status = Open3.capture3(BINARY, *FLAGS, *argv)
    raise "chromium #{argv.join(' ')} failed: #{err}" unless status.success?

    out
  end

  # The page's DOM after Chromium loaded it.
  def dump_dom(page)
    run!('--dump-dom', "file://#{page}")
  end

  # A screenshot of the page (800 px wide); its path.
  def screenshot(page, png)
    run!("--screenshot=#{png}", '--window-size=800,1800', "file://#{page}")
    raise "chromium wrote no #{png}" unless File.size?(png)

    png
  end

  # How many distinct colours a PNG (8-bit RGB or RGBA, not interlaced, as
  # Chromium writes its screenshots) holds: a blank page has one or two.
  def colours(path)
    data = File.binread(path)
    raise "#{path} is not a PNG" unless data.start_with?("\x89PNG\r\n\x1a\n".b)

    header, idat = png_chunks(data)
    width, height, depth, colour, _compression, _filter, interlace = header.unpack('NNCCCCC')
    unless depth == 8 && [2, 6].include?(colour) && interlace.zero?
      raise "#{path}: depth #{depth}, colour type #{colour}, interlace #{interlace}"
    end

    unfiltered_pixels(Zlib::Inflate.inflate(idat), width, height, colour == 6 ? 4 : 3).size
  end

  def png_chunks(data)
    pos = 8
    header = nil
    idat = +''.b
    while pos + 8 <= data.bytesize
      length = data.byteslice(pos, 4).unpack1('N')
      type = data.byteslice(pos + 4, 4)
      body = data.byteslice(pos + 8, length)
      header = body if type == 'IHDR'
      idat << body if type == 'IDAT'
      pos += 12 + length
    end
    [header, idat]
  end

  # The set of pixel values, undoing each row's PNG filter.
  def unfiltered_pixels(raw, width, height, bpp)
    stride = width * bpp
    previous = Array.new(stride, 0)
    seen = Set.new
    height.times do |y|
      filter = raw.getbyte(y * (stride + 1))
      row = raw.byteslice(y * (stride + 1) + 1, stride).bytes
      row.each_index do |i|
        left = i >= bpp ? row[i - bpp] : 0
        up = previous[i]
        corner = i >= bpp ? previous[i - bpp] : 0
        row[i] = (row[i] + predictor(filter, left, up, corner)) & 0xff
      end
      row.each_slice(bpp) { |pixel| seen << pixel }
      previous = row
    end
    seen
  end

  def predictor(filter, left, up, corner)
    case filter
    when 0 then 0
    when 1 then left
    when 2 then up
    when 3 then (left + up) / 2
    when 4
      p = left + up - corner
      pa = (p - left).abs
      pb = (p - up).abs
      pc = (p - corner).abs
      if pa <= pb && pa <= pc then left
      elsif pb <= pc then up
      else corner
      end
    else raise "unknown PNG filter #{filter}"
    end
  end
end

RSpec.configure do |config|
  config.order = :defined
  config.formatter = :documentation if config.formatters.empty?
  config.include SandboxHarness
  config.include SandboxProbes

  config.before(:suite) do
    # RSpec's own first Ctrl-C only finishes the current example (an apply can
    # take minutes) and its second one exit!s without any teardown. Abort at
    # once instead; at_exit below takes the sandbox down.
    trap('INT') do
      SandboxHarness.log 'interrupted: tearing the sandbox down'
      raise Interrupt
    end
    SandboxHarness.up
  rescue Exception # rubocop:disable Lint/RescueException -- tear down on interrupts too, then re-raise
    SandboxHarness.down
    raise
  end

  config.after(:suite) { SandboxHarness.down }
end

# A second Ctrl-C, SIGTERM or an exception outside the examples skips
# after(:suite); at_exit still runs. down is idempotent.
at_exit { SandboxHarness.down if SandboxHarness.instance_variable_defined?(:@torn_down) }

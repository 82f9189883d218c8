# frozen_string_literal: true

require_relative 'spec_helper_acceptance'
require_relative '../../lib/puppet_x/clone_army/helper'

# The module's spine, end to end: inside a sandbox host (a real systemd),
# `puppet apply` of the class with the real helper (files/clone-army, which
# the class installs itself) builds a base, starts two booted clones, and
# their agents get certificates from and send reports to a real Puppet Server.
RSpec.describe 'class clone_army on a sandbox host' do
  clones = ['clone1', 'clone2'].freeze
  # The suite's short runinterval: runs are phased (clone i of N first runs
  # (i - 1) * T / N after its start), so with the default 1800 clone2 would
  # first check in after 15 minutes; with 60, after half a minute.
  manifest = "class { 'clone_army': server => '#{SandboxHarness::SERVER}', num_clones => #{clones.size}, " \
             "runinterval => #{SandboxHarness::RUNINTERVAL} }"
  # Debian's Puppet Server logs every request here (its request-logging.xml).
  access_log = '/var/log/puppetserver/puppetserver-access.log'

  # Bounds on every wait (seconds): the base build (debootstrap) is in the first apply.
  first_apply_timeout = Integer(ENV.fetch('FIRST_APPLY_TIMEOUT', 1200))
  boot_timeout = 120
  checkin_timeout = Integer(ENV.fetch('CHECKIN_TIMEOUT', 420))

  let(:certnames) { clones.map { |c| "#{c}.#{host_certname}" } }

  context 'a --noop run before the first apply (no helper on the host yet)' do
    it 'previews the base and the clones it would create, and changes nothing' do
      result = on_sandbox('puppet', 'apply', '--noop', '--detailed-exitcodes', '--color=false', '-e', manifest,
                          timeout: 600)
      # 0 or 2: --noop reports no changes applied; a failed prefetch would be 4 or 6.
      expect([0, 2]).to include(result.exitstatus), result.to_s
      # Puppet 7 words a noop change by its values, Puppet 8 by the type's change_to_s.
      base_noop = %r{Clone_army_base\[[^\]]+\]/ensure: (current_value '?absent'?, should be '?present'?|created) \(noop\)}
      expect(result.output).to match(base_noop), result.to_s
      clones.each do |clone|
        clone_noop = %r{Clone_army_clone\[#{clone}\]/ensure: (current_value '?absent'?, should be|created and started \(noop\))}
        expect(result.output).to match(clone_noop), result.to_s
      end
      expect(result.output).not_to match(%r{Could not prefetch}), result.to_s
      expect(on_sandbox('test', '-e', '/usr/local/sbin/clone-army', timeout: 30).exitstatus).to eq(1)
    end
  end

  context 'first apply' do
    before(:all) { @first = SandboxHarness.apply(manifest, timeout: first_apply_timeout) }

    it 'changes the host and exits 2 (--detailed-exitcodes)' do
      expect(@first.exitstatus).to eq(2), @first.to_s
      expect(@first.output).not_to match(%r{^(Error|Warning):}), @first.to_s
    end

    it 'installs the helper on the PATH' do
      result = on_sandbox('clone-army', 'clone', 'list', '--format', 'json', timeout: 60)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(JSON.parse(result.stdout)).to include('protocol' => PuppetX::CloneArmy::Helper::PROTOCOL_VERSION, 'ok' => true)
    end

    # The sandbox has no man-db: the page is checked as a file; bash loads the completion.
    it 'installs the man page and the completions, current, and bash loads the completion' do
      page = on_sandbox('head', '-c', '4096', '/usr/local/share/man/man8/clone-army.8', timeout: 30)
      expect(page.exitstatus).to eq(0), page.to_s
      expect(page.stdout).to match(%r{^\.TH clone-army 8 }), page.to_s
      expect(on_sandbox('test', '-s', '/usr/local/share/zsh/site-functions/_clone-army', timeout: 30).exitstatus).to eq(0)
      expect(on_sandbox('test', '-s', '/usr/local/share/fish/vendor_completions.d/clone-army.fish', timeout: 30).exitstatus).to eq(0)
      check = on_sandbox('clone-army', 'host', 'docs', '--check', timeout: 60)
      expect(check.exitstatus).to eq(0), check.to_s
      loaded = on_sandbox('bash', '-c', '. /usr/local/share/bash-completion/completions/clone-army && complete -p clone-army',
                          timeout: 30)
      expect(loaded.exitstatus).to eq(0), loaded.to_s
      expect(loaded.stdout).to include('-F _clone__army'), loaded.to_s
    end

    it "raises the system bus's connection limits and has the bus reload them" do
      dropin = on_sandbox('cat', '/etc/dbus-1/system.d/puppet-clone-army.conf', timeout: 30)
      expect(dropin.exitstatus).to eq(0), dropin.to_s
      expect(dropin.stdout).to include('<limit name="max_connections_per_user">4096</limit>'), dropin.to_s
      # systemd's own lines for the reload job of dbus.service (systemctl reload dbus).
      log = on_sandbox('journalctl', '--no-pager', '-o', 'cat', '-u', 'dbus.service', timeout: 60)
      expect(log.stdout).to match(%r{^Reloaded .*D-Bus}), log.to_s
    end

    it 'has both clones running, as machinectl lists them' do
      seen = wait_for(timeout: boot_timeout, interval: 2) { (clones - machines).empty? && machines }
      expect(seen).to be_truthy, "machinectl list never showed #{clones.join(', ')}\n#{diagnostics}"
      expect(seen).to include(*clones)
    end

    it 'reports both clones running, with their certnames, in the helper listing' do
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.zip(certnames).each do |clone, certname|
        expect(listed[clone]).to include('state' => 'running', 'server' => SandboxHarness::SERVER,
                                         'certname' => certname, 'mounted' => true),
                                 "#{clone}: #{listed[clone].inspect}\n#{diagnostics}"
      end
    end

    it "keeps each clone's journal within 8 MiB (the base's journald drop-in)" do
      clones.each do |clone|
        usage = in_clone(clone, 'journalctl', '--disk-usage')
        expect(usage.exitstatus).to eq(0), usage.to_s
        # "Archived and active journals take up 2.0M in the file system."
        number, unit = usage.stdout.match(%r{take up ([0-9.]+)([BKMG])})&.captures
        expect(number).not_to be_nil, usage.to_s
        bytes = number.to_f * (1024**'BKMG'.index(unit))
        expect(bytes).to be_between(1, 8 * (1024**2)), "#{clone}: #{usage}"
      end
    end

    it "boots each clone without the base's first-boot updates, with the container-idle generators, units and timers masked" do
      # Debian 12's systemd has no ldconfig.service and no journal catalog update; both have sysusers.
      updates = ['ldconfig.service', 'systemd-sysusers.service', 'systemd-journal-catalog-update.service']
      loaded_updates = lambda do |clone|
        out = on_sandbox('systemctl', "--machine=#{clone}", 'show', '--property=Id,LoadState,ConditionResult',
                         '--property=ConditionTimestampMonotonic', *updates, timeout: 30).stdout
        out.split("\n\n").map { |unit| unit.lines.to_h { |l| l.strip.split('=', 2) } }
           .select { |unit| unit['LoadState'] == 'loaded' }
      end
      clones.each do |clone|
        # A condition not yet evaluated reads "no" too: wait until each unit's was.
        units = wait_for(timeout: boot_timeout, interval: 2) do
          seen = loaded_updates.call(clone)
          seen if seen.any? { |u| u['Id'] == 'systemd-sysusers.service' } &&
                  seen.none? { |u| u['ConditionTimestampMonotonic'] == '0' }
        end
        expect(units).to be_truthy, "#{clone}: the update units' conditions were never evaluated\n#{diagnostics}"
        results = units.to_h { |u| [u['Id'], u['ConditionResult']] }
        expect(results).to eq(results.transform_values { 'no' }), "#{clone}: an update unit's condition held"
      end
      base = base_json.fetch('name')
      masked = on_sandbox!('readlink', "/var/lib/puppet-clone-army/#{base}/etc/systemd/system-generators/" \
                                       'systemd-gpt-auto-generator', timeout: 30).stdout.strip
      expect(masked).to eq('/dev/null')
      # Every Debian base has apt's timers, logind, a console getty and the static device nodes' service;
      # in a clone they are masked, the clone's own upkeep and the bus that exec and systemctl --machine
      # use are not.
      expected = { 'apt-daily.timer' => 'masked', 'apt-daily-upgrade.timer' => 'masked',
                   'systemd-logind.service' => 'masked', 'console-getty.service' => 'masked',
                   'systemd-tmpfiles-setup-dev.service' => 'masked',
                   'systemd-tmpfiles-clean.timer' => 'loaded', 'dbus.service' => 'loaded' }
      clones.each do |clone|
        units = on_sandbox!('systemctl', "--machine=#{clone}", 'show', '--property=Id,LoadState',
                            *expected.keys, timeout: 30).stdout
        states = units.split("\n\n").to_h { |unit| unit.lines.to_h { |l| l.strip.split('=', 2) }.values_at('Id', 'LoadState') }
        expect(states).to eq(expected), "#{clone}: #{units}"
      end
    end

    # Each clone's settings tell its systemd to add no filters of its own: journald, whose unit asks for
    # more than a dozen, runs under exactly the filters of the clone's init, the container's.
    it "runs each clone's services under the container's system-call filter only" do
      clones.each do |clone|
        script = 'grep -H ^Seccomp_filters: /proc/1/status ' \
                 '"/proc/$(systemctl show --property=MainPID --value systemd-journald.service)/status"'
        result = in_clone(clone, 'sh', '-c', script, timeout: 60)
        expect(result.exitstatus).to eq(0), "#{clone}: #{result}"
        counts = result.stdout.scan(%r{^/proc/(\d+)/status:Seccomp_filters:\s+(\d+)$}).to_h
        expect(counts.size).to eq(2), "#{clone}: #{result}"
        init = Integer(counts.delete('1'))
        expect(init).to be_positive, "#{clone}: #{result}"
        expect(counts.values.map { |n| Integer(n) }).to eq([init]), "#{clone}: #{result}"
      end
    end

    # nspawn names each clone's host as its /etc/hostname does, so the clone's systemd finds the name set
    # and leaves it: every change of a hostname wakes the journald of every clone running.
    it 'starts each clone under its certname, set once, by nspawn' do
      clones.zip(certnames).each do |clone, certname|
        expect(in_clone(clone, 'hostname', timeout: 30).stdout.strip).to eq(certname)
        unit = "puppet-clone-army@#{clone}.service"
        id = on_sandbox!('systemctl', 'show', '--property=InvocationID', '--value', unit, timeout: 30).stdout.strip
        console = on_sandbox!('journalctl', "_SYSTEMD_INVOCATION_ID=#{id}", '--output=cat', '--no-pager', timeout: 60).stdout
        expect(console).to match(%r{Reached target .*[Mm]ulti-[Uu]ser}), "#{clone}: its console, as the host's journal has it:\n#{console}"
        expect(console).not_to match(%r{Hostname set to}), "#{clone}: its systemd set the hostname:\n#{console}"
      end
    end

    # A run whose catalog request fails must fail, not apply the cached catalog and read
    # "unchanged" (Puppet's default): the agent as the clone runs it says so.
    it "runs each clone's agent without the cached catalog to fall back on" do
      clones.each do |clone|
        result = in_clone(clone, 'puppet', 'config', 'print', 'usecacheonfailure', '--section', 'agent', timeout: 120)
        expect(result.exitstatus).to eq(0), "#{clone}: #{result}"
        expect(result.stdout.strip).to eq('false'), "#{clone}: #{result}"
      end
    end

    it 'gets both clones a certificate signed by the server' do
      signed = wait_for(timeout: checkin_timeout) { (certnames - signed_certs).empty? }
      expect(signed).to be_truthy,
                        "not signed after #{checkin_timeout}s: #{certnames - signed_certs}\n#{diagnostics}"
      ca = on_sandbox('puppetserver', 'ca', 'list', '--all', timeout: 180)
      expect(ca.exitstatus).to eq(0), ca.to_s
      certnames.each { |c| expect(ca.stdout).to match(%r{^\s*\+?\s*#{Regexp.escape(c)}\s}), ca.to_s }
    end

    it 'has a report from each clone on the server' do
      got = wait_for(timeout: checkin_timeout) { (certnames - reports.keys).empty? }
      expect(got).to be_truthy,
                     "no report after #{checkin_timeout}s from: #{certnames - reports.keys}\n#{diagnostics}"
    end

    # A minute of the running fleet recorded with its server's (and PuppetDB's)
    # view, its page made and opened in headless Chromium on this machine, as a
    # person would look at it.
    context 'a recorded minute and its page' do
      before(:all) do
        @page_dir = Dir.mktmpdir('clone-army-page')
        views = ['--server', "https://#{SandboxHarness::SERVER}:8140",
                 '--ca-cert', '/etc/puppet/puppetserver/ca/ca_crt.pem']
        if puppetdb?
          views += ['--puppetdb', "https://#{SandboxHarness::SERVER}:8081", '--client-cert',
                    "/var/lib/puppet/ssl/certs/#{SandboxHarness::SERVER}.pem", '--client-key',
                    "/var/lib/puppet/ssl/private_keys/#{SandboxHarness::SERVER}.pem"]
        end
        # The server's access log is the sandbox's own: the recorder reads it as it grows.
        @recorded = SandboxHarness.on_sandbox(SandboxHarness::HELPER, 'record', '--output', '/root/minute.jsonl',
                                              '--every', '5', '--samples', '13', '--interval',
                                              SandboxHarness::RUNINTERVAL.to_s, '--access-log', access_log,
                                              *views, timeout: 180)
        page = SandboxHarness.on_sandbox(SandboxHarness::HELPER, 'report', '--from', '/root/minute.jsonl',
                                         '--format', 'html', timeout: 60)
        @page = File.join(@page_dir, 'run.html')
        File.write(@page, page.stdout)
        @dom = Chromium.dump_dom(@page)
        @png = Chromium.screenshot(@page, File.join(@page_dir, 'run.png'))
      end

      after(:all) { FileUtils.rm_rf(@page_dir) }

      it 'records every sample' do
        expect(@recorded.exitstatus).to eq(0), @recorded.to_s
        done = JSON.parse(@recorded.stdout).fetch('result')
        expect(done).to include('samples' => 13, 'ended_by' => 'samples')
      end

      it 'draws every chart from samples, in the page as Chromium loaded it' do
        charts = @dom.scan(%r{<figure class="chart" id="([a-z-]+)" data-points="(\d+)"}).to_h
        expect(charts.keys).to eq(['runs-per-minute', 'run-time', 'config-retrieval-time', 'clones', 'jrubies',
                                   'jruby-times', 'compile-time', 'puppetdb-queue', 'endpoint-requests',
                                   'endpoint-time', 'server-failures', 'server-jvm', 'host'])
        # Every sample has the fleet, the pool, the server's window and the host; run times and the
        # access log's request times need a run in the minute (the two clones each run once a
        # minute, phased half a minute apart).
        ['runs-per-minute', 'clones', 'jrubies', 'jruby-times', 'host', 'run-time', 'endpoint-requests',
         'endpoint-time', 'server-failures', 'server-jvm'].each do |id|
          expect(charts[id].to_i).to be > 0, "#{id}: #{charts}"
        end
        expect(charts['puppetdb-queue'].to_i).to be > 0, charts.inspect if puppetdb?
        expect(@dom).to include('<svg ')
      end

      it 'renders to a screenshot that is not blank' do
        expect(Chromium.colours(@png)).to be > 16
      end
    end

    context 'with PuppetDB behind the server' do
      before { skip "this suite's sandbox host has no PuppetDB (sandbox/lib.sh)" unless puppetdb? }

      it "stores each clone's facts, catalog and report in PuppetDB" do
        stored = wait_for(timeout: checkin_timeout) do
          nodes = puppetdb_query('nodes').to_h { |n| [n['certname'], n] }
          certnames.all? { |c| nodes[c] && ['facts_timestamp', 'catalog_timestamp', 'report_timestamp'].all? { |k| nodes[c][k] } } &&
            nodes
        end
        expect(stored).to be_truthy, "PuppetDB lacks #{certnames}: #{puppetdb_query('nodes')}\n#{diagnostics}"
        certnames.each do |c|
          expect(stored[c]).to include('latest_report_status' => match(%r{\A(changed|unchanged)\z})), stored[c].inspect
        end
      end

      it 'has clone-army report --puppetdb show its command queue, with the host agent certificate found by itself' do
        result = on_sandbox(SandboxHarness::HELPER, 'report', '--puppetdb', "https://#{SandboxHarness::SERVER}:8081",
                            '--ca-cert', '/var/lib/puppet/ssl/certs/ca.pem', '--format', 'json', timeout: 120)
        expect(result.exitstatus).to eq(0), result.to_s
        view = JSON.parse(result.stdout).fetch('result').fetch('puppetdb')
        expect(view).to include('ok' => true, 'state' => 'running', 'error' => nil, 'metrics_error' => nil,
                                'client_cert' => "/var/lib/puppet/ssl/certs/#{SandboxHarness::SERVER}.pem"), view.inspect
        expect(view['version']).to match(%r{\A\d+\.\d+}), view.inspect
        expect(view['queue_depth']).to be_a(Integer), view.inspect
        # A fact set, a catalog and a report from each clone at least.
        expect(view.dig('commands', 'processed')).to be >= 3 * certnames.size, view.inspect
        expect(view.dig('commands', 'processing_mean_ms')).to be > 0, view.inspect
        table = on_sandbox(SandboxHarness::HELPER, 'report', '--puppetdb', "https://#{SandboxHarness::SERVER}:8081",
                           '--ca-cert', '/var/lib/puppet/ssl/certs/ca.pem', '--format', 'table', timeout: 120)
        expect(table.stdout).to match(%r{^  commands: \d+ processed, [0-9.]+/s over the last minute; processing mean \d+ ms}),
                                table.to_s
      end

      # A fleet across load hosts with nothing beside PuppetDB: a second sandbox
      # host under the same server gets the class and two clones of its own
      # (named as this host's are); both hosts' own agents upload their facts,
      # the clone_army fact with the clones' certnames among them; one report
      # on the second host then shows both hosts' clones.
      context 'with a second load host under the same server' do
        second = SandboxHarness::SECOND
        on_second = ->(*argv, timeout: 300) { SandboxHarness.on_sandbox(*argv, timeout: timeout, sandbox: second) }

        before(:all) do
          # The examples are skipped without PuppetDB (the before above runs
          # after this one); so is the second host.
          next unless puppetdb?

          SandboxHarness.up_second_host
          # The base the first host built, copied rather than built again (its
          # build is what the first apply tested); nothing else of that host.
          bases = JSON.parse(SandboxHarness.on_sandbox!(SandboxHarness::HELPER, 'base', 'list', '--format', 'json', timeout: 60).stdout)
                      .fetch('result').fetch('bases').map { |b| b.fetch('name') }
          bases.each do |base|
            copied = system('cp', '-a', File.join(SandboxHarness.state_dir_outside(SandboxHarness::NAME), base),
                            SandboxHarness.state_dir_outside(second))
            raise "copying base #{base} to sandbox #{second} failed" unless copied
          end
          @second_apply = SandboxHarness.apply(manifest, timeout: 900, sandbox: second)
          @second_certname = on_second.call('puppet', 'config', 'print', 'certname', timeout: 60).stdout.strip
          # `puppet facts upload` sends the facts with the host agent's certificate,
          # which it does not ask for by itself (the sandbox server autosigns).
          @uploads = [SandboxHarness.method(:on_sandbox), on_second].flat_map do |run|
            [['puppet', 'ssl', 'bootstrap'], ['puppet', 'facts', 'upload']].map do |argv|
              run.call(*argv, '--color=false', timeout: 300)
            end
          end
        end

        after(:all) { SandboxHarness.down_second_host }

        let(:second_certnames) { clones.map { |c| "#{c}.#{@second_certname}" } }

        it 'applies the class there, its clones getting certnames of their own' do
          expect(@second_apply.exitstatus).to eq(2), @second_apply.to_s
          expect(@second_certname).not_to eq(host_certname)
          expect(second_certnames & certnames).to be_empty
          @uploads.each { |upload| expect(upload.exitstatus).to eq(0), upload.to_s }
        end

        it "has clone-army report --puppetdb on that host show both hosts' clones, per host" do
          wanted = certnames + second_certnames
          reported = wait_for(timeout: checkin_timeout, interval: 5) do
            nodes = puppetdb_query('nodes').to_h { |n| [n['certname'], n] }
            wanted.all? { |c| nodes.dig(c, 'report_timestamp') }
          end
          expect(reported).to be_truthy, "PuppetDB lacks reports of #{wanted}: #{puppetdb_query('nodes')}"
          result = on_second.call(SandboxHarness::HELPER, 'report', '--puppetdb', "https://#{SandboxHarness::SERVER}:8081",
                                  '--format', 'json', timeout: 120)
          expect(result.exitstatus).to eq(0), result.to_s
          view = JSON.parse(result.stdout).fetch('result').fetch('puppetdb')
          expect(view).to include('ok' => true, 'fleet_error' => nil), view.inspect
          hosts = view.fetch('fleet').fetch('hosts').to_h { |h| [h.fetch('host'), h] }
          expect(hosts.keys).to include(host_certname, @second_certname)
          { host_certname => certnames, @second_certname => second_certnames }.each do |host, names|
            expect(hosts[host]['error']).to be_nil, hosts[host].inspect
            expect(hosts[host]['clones'].map { |c| c['certname'] }).to match_array(names)
            hosts[host]['clones'].each do |c|
              expect(c['status']).to match(%r{\A(changed|unchanged)\z}), c.inspect
              expect(c['total_time']).to be > 0, c.inspect
            end
            expect(hosts[host].dig('fleet', 'clones')).to eq(names.size)
          end
          # The real facts of two load hosts and their clones: every claim is trusted.
          expect(view.dig('fleet', 'untrusted')).to eq([]), view.inspect
          all = view.dig('fleet', 'fleet')
          expect(all['clones']).to eq(hosts.values.sum { |h| h['clones'].size })
          expect(all.dig('total_time', 'count')).to be >= wanted.size
          table = on_second.call(SandboxHarness::HELPER, 'report', '--puppetdb', "https://#{SandboxHarness::SERVER}:8081",
                                 '--format', 'table', timeout: 120)
          expect(table.stdout).to match(%r{^  fleet in PuppetDB: \d+ load hosts, \d+ clones$}), table.to_s
          [host_certname, @second_certname].each do |host|
            expect(table.stdout).to include("  load host #{host}:"), table.to_s
          end
          metrics = on_second.call(SandboxHarness::HELPER, 'report', '--puppetdb', "https://#{SandboxHarness::SERVER}:8081",
                                   '--format', 'prometheus', timeout: 120)
          expect(metrics.stdout).to include(%(clone_army_puppetdb_fleet_clones{host="#{@second_certname}"} 2)), metrics.to_s
        end

        # Several load hosts, one ramp: each host stops its clone2 and ramps it back
        # in one step keyed to the same wall-clock time, so both step together; the
        # two baselines then merge into one verdict over every run of both.
        it 'steps both load hosts together (--start-at) and merges their baselines into one verdict' do
          interval = SandboxHarness::RUNINTERVAL.to_s
          hosts = [SandboxHarness.method(:on_sandbox), on_second]
          hosts.each { |run| run.call(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone2', timeout: 120) }
          # Both ramps must be waiting before it: the sandboxes share this machine's clock.
          start_at = (Time.now.to_i + 45).to_s
          ramps = hosts.map do |run|
            Thread.new do
              run.call(SandboxHarness::HELPER, 'ramp', 'run', '--output', '/var/tmp/clone-army-two-hosts.json',
                       '--step', '1', '--interval', interval, '--hold', interval, '--every', '5', '--start-at', start_at,
                       '--max-p95', '600', '--max-error-rate', '50', timeout: 600)
            end
          end.map(&:value)
          baselines = ramps.map do |ramp|
            expect(ramp.exitstatus).to eq(0), ramp.to_s
            JSON.parse(ramp.stdout).fetch('result')
          end
          baselines.each do |b|
            expect(b).to include('start_at' => Time.at(Integer(start_at)).utc.strftime('%Y-%m-%dT%H:%M:%SZ'), 'resolution' => nil)
            # The step begins at the start time (its t is when its clone's start began).
            expect(b.dig('steps', 0, 't')).to be_between(Integer(start_at), Integer(start_at) + 60), b.inspect
            expect(b.dig('steps', 0, 'clones')).to eq(2), b.inspect
          end
          # The second host's baseline beside the first's, then both merged there.
          second = on_second.call('cat', '/var/tmp/clone-army-two-hosts.json', timeout: 60).stdout
          SandboxHarness.on_sandbox!('sh', '-c', 'printf %s "$1" > "$2"', 'sh', second, '/var/tmp/clone-army-two-hosts-b.json',
                                     timeout: 60)
          merged = on_sandbox(SandboxHarness::HELPER, 'ramp', 'report', '/var/tmp/clone-army-two-hosts.json',
                              '/var/tmp/clone-army-two-hosts-b.json', '--format', 'json', timeout: 60)
          expect(merged.exitstatus).to eq(0), merged.to_s
          merged = JSON.parse(merged.stdout).fetch('result').fetch('baseline')
          expect(merged['load_hosts'].size).to eq(2), merged.inspect
          step = merged.dig('steps', 0)
          expect(step['clones']).to eq(4), step.inspect
          expect(step['runs']).to eq(baselines.sum { |b| b.dig('steps', 0, 'runs') }), step.inspect
          expect(step.dig('total_time', 'count')).to eq(step['run_times']['runs'].size), step.inspect
          expect(merged.dig('verdict', 'summary')).to start_with("sustained 4 agents at interval #{interval} s"), merged.inspect
        end
      end
    end
  end

  context 'second apply' do
    before(:all) { @second = SandboxHarness.apply(manifest, timeout: 600) }

    it 'makes no change (exit 0)' do
      expect(@second.exitstatus).to eq(0), @second.to_s
    end

    it 'leaves both clones running' do
      expect(machines).to include(*clones), diagnostics
    end
  end

  # A stepped load against the real server: clone2 stopped, the ramp starts it
  # as its one step, lets it make its first run (settle: one interval), then
  # judges the runs that finish in the next interval (clone1's and clone2's)
  # against the bounds, with the server's view. Two clones cannot make the 20
  # runs of a p95 in the one interval --max-hold allows: the step says so.
  context 'clone-army ramp run' do
    baseline = '/var/tmp/clone-army-ramp.json'
    ramp_timeline = '/var/tmp/clone-army-ramp.jsonl'

    before(:all) do
      on_sandbox!('rm', '-f', baseline, ramp_timeline, timeout: 30)
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone2', timeout: 120)
      interval = SandboxHarness::RUNINTERVAL.to_s
      @ramp = on_sandbox(SandboxHarness::HELPER, 'ramp', 'run', '--output', baseline, '--timeline', ramp_timeline,
                         '--label', 'acceptance', '--step', '1', '--interval', interval, '--hold', interval,
                         '--max-hold', interval,
                         '--every', '5', '--max-p95', '600', '--max-error-rate', '50', '--min-throughput', '40',
                         '--max-queue-limit-hits', '0', '--max-borrow-timeouts', '0', '--access-log', access_log,
                         '--server', "https://#{SandboxHarness::SERVER}:8140", timeout: 600)
    end

    it 'adds the stopped clone, settles and holds a run interval each, and says what the stack sustained' do
      expect(@ramp.exitstatus).to eq(0), "#{@ramp}\n#{diagnostics}"
      answer = JSON.parse(@ramp.stdout).fetch('result')
      expect(answer).to include('output' => baseline, 'running_before' => 1, 'interval' => SandboxHarness::RUNINTERVAL)
      expect(answer['server_version']).to match(%r{\A\d+\.\d+}), answer.inspect
      step = answer.fetch('steps').fetch(0)
      expect(step).to include('step' => 1, 'clones' => 2, 'added' => 1, 'start_failed' => [], 'within_bounds' => true)
      expect(step['runs']).to be >= 1, step.inspect
      expect(step['total_time']).to include('p95' => nil, 'tail' => include('of' => 'max')), step.inspect
      expect(step['total_time']['tail']['value']).to be > 0, step.inspect
      expect(step['hold_note']).to start_with("20 runs of 2 clones at interval #{SandboxHarness::RUNINTERVAL} s"), step.inspect
      expect(step['run_times']['runs'].size).to eq(step['total_time']['count']), step.inspect
      # The runs due: one each interval from each of the 2 clones; first runs count as made.
      made = step['runs'] + step['first_runs']['runs']
      expect(step['throughput_percent'])
        .to be_within(0.01).of(100.0 * made * SandboxHarness::RUNINTERVAL / (2 * step['seconds'])), step.inspect
      # The server's own view of the window: its counts' differences and its access log.
      server = step.fetch('server')
      expect(server).to include('queue_limit_hits' => 0, 'borrow_timeouts' => 0), server.inspect
      catalog = server.fetch('endpoints').fetch('catalog')
      expect(catalog['requests']).to be >= 1, server.inspect
      expect(catalog['logged']).to be >= 1, server.inspect
      # A p95 only over 20 requests or more; below that the max is the tail.
      expect(catalog['max_ms']).to be > 0, server.inspect
      if catalog['logged'] >= 20
        expect(catalog['p95_ms']).to be > 0, server.inspect
      else
        expect(catalog['p95_ms']).to be_nil, server.inspect
      end
      expect(server.fetch('endpoints')).to include('report'), server.inspect
      expect(answer['verdict']).to include('ended_by' => 'clones')
      expect(answer['verdict']['summary']).to start_with("sustained 2 agents at interval #{SandboxHarness::RUNINTERVAL} s ("),
                                              answer.inspect
      expect(machines).to include(*clones), diagnostics
    end

    it 'keeps the baseline and the marked samples, and reports them as a table' do
      samples = on_sandbox!('cat', ramp_timeline, timeout: 60).stdout.lines.map { |l| JSON.parse(l) }
      # The step's first sample, once its clone has started, then one every 5 s from the
      # step's start to its window's end (those due while the clone started skipped).
      started = JSON.parse(on_sandbox!('cat', baseline, timeout: 60).stdout).fetch('steps').fetch(0).fetch('t')
      skipped = (samples.first['t'] - started) / 5
      expect(samples.size).to eq(1 + (2 * SandboxHarness::RUNINTERVAL / 5) - skipped), samples.size.to_s
      expect(samples.map { |s| s['step'] }.uniq).to eq([{ 'step' => 1, 'clones' => 2 }])
      expect(samples.last['server']).to include('ok' => true), samples.last['server'].inspect
      table = on_sandbox!(SandboxHarness::HELPER, 'ramp', 'report', baseline, '--against', baseline, '--format', 'table',
                          timeout: 60)
      expect(table.stdout).to match(%r{^ramp acceptance: \+1 clones every #{2 * SandboxHarness::RUNINTERVAL} s \(settle}),
                              table.to_s
      # Too few runs for a p95 on either side: the comparison says over how many.
      expect(table.stdout).to match(%r{^2 +max\(\d+\) +max\(\d+\) +- }), table.to_s
    end
  end

  # The class's recorder: a service of its own, which keeps recording into one
  # timeline through a crash and a helper upgrade, and whose page the report
  # task makes; record => false takes the service away and keeps the timeline.
  context 'with record => true' do
    timeline = '/var/log/puppet-clone-army/timeline.jsonl'
    unit = 'puppet-clone-army-record.service'
    recording = "#{manifest.delete_suffix(' }')}, record => true, record_every => 5 }"

    # The timeline's lines, parsed (one cut short while being written is left out).
    def timeline_samples(path)
      on_sandbox!('cat', path, timeout: 60).stdout.lines.filter_map do |line|
        JSON.parse(line)
      rescue JSON::ParserError
        nil
      end
    end

    def recorder_pid
      unit_property('puppet-clone-army-record.service', 'MainPID').to_i
    end

    # Waits until the timeline holds more than `count` samples; their number.
    def samples_beyond(path, count)
      wait_for(timeout: 60, interval: 2) do
        n = timeline_samples(path).size
        n > count && n
      end
    end

    before(:all) do
      on_sandbox!('rm', '-f', timeline, timeout: 30)
      @applied = SandboxHarness.apply(recording, timeout: 600)
      @again = SandboxHarness.apply(recording, timeout: 600)
    end

    # Whatever happened above, the host goes back to the spec's manifest.
    after(:all) { SandboxHarness.apply(manifest, timeout: 600) }

    it 'starts the recorder with the first apply, and a second apply changes nothing' do
      expect(@applied.exitstatus).to eq(2), @applied.to_s
      expect(@applied.output).to match(%r{Service\[puppet-clone-army-record\]/ensure: ensure changed 'stopped' to 'running'}),
                                 @applied.to_s
      expect(@applied.output).not_to match(%r{^(Error|Warning):}), @applied.to_s
      expect(@again.exitstatus).to eq(0), @again.to_s
    end

    it 'runs it enabled at boot, confined to its directory, sampling the fleet and the server' do
      expect(unit_property(unit, 'ActiveState')).to eq('active')
      expect(unit_property(unit, 'UnitFileState')).to eq('enabled')
      expect(unit_property(unit, 'ProtectSystem')).to eq('strict')
      expect(samples_beyond(timeline, 2)).to be_truthy, diagnostics
      last = timeline_samples(timeline).last
      expect(last['fleet']).to include('clones' => 2, 'running' => 2)
      expect(last['server']).to include('ok' => true), last['server'].inspect
      expect(last['host']).to include('mem_total_bytes' => a_value > 0)
    end

    it 'is restarted after a crash, appending to the same timeline' do
      before = timeline_samples(timeline)
      pid = recorder_pid
      expect(pid).to be > 0
      on_sandbox!('kill', '-KILL', pid.to_s, timeout: 30)
      restarted = wait_for(timeout: 60, interval: 2) { (p = recorder_pid) != pid && p.positive? && p }
      expect(restarted).to be_truthy, "the recorder was not started again after SIGKILL\n#{diagnostics}"
      expect(samples_beyond(timeline, before.size)).to be_truthy
      expect(timeline_samples(timeline).first(before.size)).to eq(before)
    end

    # A new helper: the installed one with bytes appended (an ELF runs the
    # same), installed by the class through helper_source and its checksum.
    it 'is restarted with a new helper, appending to the same timeline' do
      on_sandbox!('sh', '-c', "cp #{SandboxHarness::HELPER} /root/clone-army-next && echo next >> /root/clone-army-next", timeout: 60)
      checksum = on_sandbox!('sha256sum', '/root/clone-army-next', timeout: 60).stdout.split.first
      before = timeline_samples(timeline)
      pid = recorder_pid
      upgrade = SandboxHarness.apply("#{recording.delete_suffix(' }')}, helper_source => '/root/clone-army-next', " \
                                     "helper_checksum => '#{checksum}' }", timeout: 600)
      expect(upgrade.exitstatus).to eq(2), upgrade.to_s
      expect(upgrade.output).to match(%r{Service\[puppet-clone-army-record\]: Triggered 'refresh'}), upgrade.to_s
      expect(recorder_pid).not_to eq(pid)
      expect(on_sandbox!('sha256sum', SandboxHarness::HELPER, timeout: 60).stdout.split.first).to eq(checksum)
      expect(samples_beyond(timeline, before.size)).to be_truthy
      expect(timeline_samples(timeline).first(before.size)).to eq(before)
    end

    it 'has the report task write the page of the run and answer its path' do
      task = "#{SandboxHarness::MODULE_BOUND}/tasks/report.rb"
      answer = on_sandbox!('sh', '-c', %(echo '{"from": "#{timeline}", "format": "html"}' | ruby #{task}), timeout: 120)
      page = JSON.parse(answer.stdout).fetch('result')
      expect(page).to include('page' => timeline.sub('.jsonl', '.html'), 'samples' => a_value > 2)
      html = on_sandbox!('cat', page['page'], timeout: 60).stdout
      expect(html.bytesize).to eq(page['bytes'])
      charts = html.scan(%r{<figure class="chart" id="([a-z-]+)" data-points="(\d+)"}).to_h
      ['clones', 'jrubies', 'host'].each { |id| expect(charts[id].to_i).to be > 0, "#{id}: #{charts}" }
    end

    # Someone allowed only the report task (which runs as root): no page
    # outside the recorder's directory, no timeline read from a device, no
    # page over a file the helper did not write; nothing on disk changes.
    it 'has the report task refuse a page over /etc/ld.so.preload, from /dev/zero and a page over another file' do
      task = "#{SandboxHarness::MODULE_BOUND}/tasks/report.rb"
      report = ->(params) { on_sandbox('sh', '-c', %(echo '#{JSON.generate(params)}' | ruby #{task}), timeout: 120) }
      error = ->(result) { JSON.parse(result.stdout).fetch('_error') }
      notes = timeline.sub('timeline.jsonl', 'notes.html')
      on_sandbox!('sh', '-c', "echo kept > #{notes}", timeout: 30)
      preload_before = on_sandbox('test', '-e', '/etc/ld.so.preload', timeout: 30).exitstatus

      preload = report.call('from' => timeline, 'format' => 'html', 'output' => '/etc/ld.so.preload')
      expect(preload.exitstatus).to eq(1), preload.to_s
      expect(error.call(preload)).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => 'output' })
      zero = report.call('from' => '/dev/zero')
      expect(zero.exitstatus).to eq(1), zero.to_s
      expect(error.call(zero)).to include('details' => { 'field' => 'from' })
      # In the recorder's directory, the helper itself refuses what is not its page.
      other = report.call('from' => timeline, 'format' => 'html', 'output' => 'notes.html')
      expect(other.exitstatus).to eq(2), other.to_s
      expect(error.call(other)).to include('kind' => 'clone_army/invalid-argument')
      expect(error.call(other)['details']).to include('field' => 'output')

      expect(on_sandbox('test', '-e', '/etc/ld.so.preload', timeout: 30).exitstatus).to eq(preload_before)
      expect(on_sandbox!('cat', notes, timeout: 30).stdout).to eq("kept\n")
      on_sandbox!('rm', '-f', notes, timeout: 30)
    end

    it 'stops and removes it with record => false, keeping the timeline' do
      back = SandboxHarness.apply(manifest, timeout: 600)
      expect(back.exitstatus).to eq(2), back.to_s
      expect(unit_property(unit, 'ActiveState')).to eq('inactive')
      expect(on_sandbox('test', '-e', "/etc/systemd/system/#{unit}", timeout: 30).exitstatus).to eq(1)
      expect(timeline_samples(timeline).size).to be > 2
    end
  end

  context 'puppet resource clone_army_clone' do
    it 'lists both clones, running' do
      result = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', timeout: 120)
      expect(result.exitstatus).to eq(0), result.to_s
      clones.each do |clone|
        expect(result.stdout).to match(%r{clone_army_clone \{ '#{clone}':\s*\n\s*ensure\s*=> '(running|present)',}m),
                                 result.to_s
      end
    end
  end
end

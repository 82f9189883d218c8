# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# The fleet's whole lifecycle and the load tools (exec, report), on the
# sandbox host and server that clone_army_spec.rb set up, in one order so that
# they share one sandbox, one server and one base. Every step that changes the
# fleet is followed by a second apply that must change nothing.
RSpec.describe 'the clone_army fleet over its lifecycle' do
  # Seconds a clone may take from start to running (machinectl lists it).
  def boot_timeout
    120
  end

  # Applies the manifest, expects exit 2 (changed) without errors, then a
  # second apply with exit 0. expect_first: nil skips the first check.
  def apply_and_settle(manifest, expect_first: 2)
    first = SandboxHarness.apply(manifest, timeout: 600)
    unless expect_first.nil?
      expect(first.exitstatus).to eq(expect_first), first.to_s
      expect(first.output).not_to match(%r{^Error:}), first.to_s
    end
    second = SandboxHarness.apply(manifest, timeout: 600)
    expect(second.exitstatus).to eq(0), "the second apply changed something:\n#{second}\n#{diagnostics}"
    first
  end

  def running?(clones)
    listed = clone_list.to_h { |c| [c['name'], c['state']] }
    clones.all? { |c| listed[c] == 'running' } && (clones - machines).empty?
  end

  # A user's edit in clone2's upper layer (it must survive stop/start,
  # a host restart and a change of server). Written from the host, straight into
  # the upper dir, while the clone is stopped and its overlay unmounted.
  def marker
    '/etc/clone-army-user-edit'
  end

  def marker_text
    'edited by hand in clone2'
  end

  def write_marker
    on_sandbox!('sh', '-c', "printf '%s\\n' '#{marker_text}' > /var/lib/puppet-clone-army/clone2-overlay#{marker}",
                timeout: 60)
  end

  # The edit as the host sees it in the upper layer and as the running clone sees it.
  def expect_marker
    upper = on_sandbox('cat', "/var/lib/puppet-clone-army/clone2-overlay#{marker}", timeout: 60)
    expect(upper.stdout.strip).to eq(marker_text), upper.to_s
    inside = in_clone('clone2', 'cat', marker)
    expect(inside.stdout.strip).to eq(marker_text), inside.to_s
  end

  def expect_running(clones, timeout: boot_timeout)
    ok = wait_for(timeout: timeout, interval: 2) { running?(clones) }
    expect(ok).to be_truthy, "not all of #{clones.join(', ')} running after #{timeout}s\n#{diagnostics}"
  end

  context 'growing the fleet 1 -> 3 and shrinking it 3 -> 1' do
    it 'starts from one clone (clone2 removed)' do
      apply_and_settle(class_manifest(num_clones: 1))
      expect(clone_list.map { |c| c['name'] }).to eq(['clone1'])
      expect_running(%w[clone1])
    end

    it 'adds clone2 and clone3 without touching clone1' do
      before = [clone_unit('clone1')[:pid],
                unit_property('puppet-clone-army@clone1.service', 'ExecMainStartTimestampMonotonic')]
      apply_and_settle(class_manifest(num_clones: 3))
      expect_running(%w[clone1 clone2 clone3])
      after = [clone_unit('clone1')[:pid],
               unit_property('puppet-clone-army@clone1.service', 'ExecMainStartTimestampMonotonic')]
      expect(after).to eq(before), "clone1 was restarted by growing the fleet: #{before} -> #{after}"
    end

    it 'removes clone2 and clone3 completely, leaving clone1 running' do
      apply_and_settle(class_manifest(num_clones: 1))
      %w[clone2 clone3].each do |c|
        traces = clone_traces(c)
        expect(traces).to eq([]), "#{c} left traces behind: #{traces}\n#{diagnostics}"
      end
      expect(clone_list.map { |c| c['name'] }).to eq(['clone1'])
      listing = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', timeout: 120)
      expect(listing.exitstatus).to eq(0), listing.to_s
      expect(listing.stdout).to match(%r{'clone1'}), listing.to_s
      expect(listing.stdout).not_to match(%r{'clone[23]'}), listing.to_s
      expect(machines).to include('clone1')
    end

    it 'grows back to 2 clones' do
      apply_and_settle(class_manifest(num_clones: 2))
      expect_running(%w[clone1 clone2])
    end
  end

  context 'puppet resource clone_army_clone clone2 ensure=stopped' do
    it 'stops clone2 and unmounts its overlay' do
      result = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone2', 'ensure=stopped',
                          timeout: 180)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(result.output).not_to match(%r{^Error:}), result.to_s
      expect(clone_unit('clone2')[:active]).to eq('inactive')
      expect(machines).not_to include('clone2')
      expect(machine_mounts).not_to include('/var/lib/machines/clone2')
      expect(machines).to include('clone1')
      write_marker
    end

    it 'is left stopped by an apply with clone_ensure => present' do
      result = SandboxHarness.apply(class_manifest(num_clones: 2, clone_ensure: 'present'), timeout: 600)
      expect(result.exitstatus).to eq(0), result.to_s
      expect(clone_unit('clone2')[:active]).to eq('inactive')
      expect(machines).not_to include('clone2')
    end

    it 'starts again with ensure=running' do
      result = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone2', 'ensure=running',
                          timeout: 180)
      expect(result.exitstatus).to eq(0), result.to_s
      expect_running(%w[clone1 clone2])
      apply_and_settle(class_manifest(num_clones: 2), expect_first: 0)
      expect_marker
    end
  end

  context 'machinectl and the root password' do
    # A crypt(3) hash that is not the password of anything: only its place in
    # /etc/shadow is checked.
    def password_hash
      '$6$cloneArmyTest$' + ('A' * 86)
    end

    # Root's password field in the text of a shadow file (nil without a root line).
    def root_password_field(shadow)
      shadow.lines.map { |line| line.split(':') }.find { |fields| fields[0] == 'root' }&.fetch(1)
    end

    it 'shows a running clone with machinectl status and opens machinectl shell in it' do
      status = on_sandbox('machinectl', 'status', '--no-pager', 'clone1', timeout: 60)
      expect(status.exitstatus).to eq(0), status.to_s
      expect(status.stdout).to match(%r{^clone1}), status.to_s
      expect(status.stdout).to match(%r{Unit: puppet-clone-army@clone1\.service}), status.to_s
      shell = on_sandbox('machinectl', 'shell', '--quiet', 'clone1', '/bin/hostname', timeout: 60)
      expect(shell.exitstatus).to eq(0), shell.to_s
      expect(shell.stdout.strip).to eq("clone1.#{host_certname}"), shell.to_s
    end

    it 'gives root no password by default, and the hash to a clone created with root_password_hash' do
      # clone1 was created without a hash; its upper layer may not even hold a
      # shadow of its own, in which case the base's (locked) one is what it sees.
      shadow = in_clone('clone1', 'cat', '/etc/shadow')
      root = root_password_field(shadow.stdout)
      expect(root).not_to be_nil, shadow.to_s
      expect(root).to match(%r{\A(\*|!.*)?\z}), "root has a password in clone1: #{root.inspect}"

      created = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone9', 'ensure=running',
                           "base=#{base_json['name']}", 'server=puppet', "certname=clone9.#{host_certname}",
                           "root_password_hash=#{password_hash}", timeout: 180)
      expect(created.exitstatus).to eq(0), created.to_s
      expect(created.output).not_to include(password_hash), 'the hash appears in the output of puppet resource'
      # The hash stays on the host (0600), reaches the clone as a credential, and
      # the clone's own unit sets it at boot: the host never writes the clone's shadow.
      kept = on_sandbox!('stat', '-c', '%a', '/var/lib/puppet-clone-army/clone9-config/root-password-hash', timeout: 60)
      expect(kept.stdout.strip).to eq('600')
      set = wait_for(timeout: 120, interval: 3) do
        shadow = in_clone('clone9', 'cat', '/etc/shadow')
        shadow.exitstatus.zero? && root_password_field(shadow.stdout) == password_hash
      end
      expect(set).to be_truthy, "clone9's root has not the hash:\n#{in_clone('clone9', 'systemctl', 'status',
                                                                             'clone-army-root-password.service')}"
    ensure
      removed = on_sandbox('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone9', 'ensure=absent',
                           timeout: 180)
      expect(removed.exitstatus).to eq(0), removed.to_s
      expect(clone_traces('clone9')).to eq([])
    end
  end

  context 'systemctl stop|start puppet-clone-army.target' do
    it 'stops every clone and unmounts every overlay' do
      result = on_sandbox('systemctl', 'stop', 'puppet-clone-army.target', timeout: 180)
      expect(result.exitstatus).to eq(0), result.to_s
      gone = wait_for(timeout: 60, interval: 2) { machines.empty? && machine_mounts.empty? }
      expect(gone).to be_truthy, "machines: #{machines}, mounts: #{machine_mounts}\n#{diagnostics}"
      %w[clone1 clone2].each { |c| expect(clone_unit(c)[:active]).to eq('inactive') }
    end

    it 'starts every clone again' do
      result = on_sandbox('systemctl', 'start', 'puppet-clone-army.target', timeout: 180)
      expect(result.exitstatus).to eq(0), result.to_s
      expect_running(%w[clone1 clone2])
      expect(machine_mounts).to include('/var/lib/machines/clone1', '/var/lib/machines/clone2')
      apply_and_settle(class_manifest(num_clones: 2), expect_first: 0)
      expect_marker
    end
  end

  context 'a crashed clone (SIGKILL of its systemd-nspawn)' do
    it 'is restarted by systemd' do
      old = clone_unit('clone1')
      expect(old).to include(active: 'active'), diagnostics
      expect(old[:pid]).to be > 0
      killed = on_sandbox('kill', '-KILL', old[:pid].to_s, timeout: 30)
      expect(killed.exitstatus).to eq(0), killed.to_s
      back = wait_for(timeout: 90, interval: 2) do
        now = clone_unit('clone1')
        now[:active] == 'active' && now[:pid].positive? && now[:pid] != old[:pid] && running?(['clone1']) && now
      end
      expect(back).to be_truthy, "clone1 not restarted within 90s (was MainPID #{old[:pid]})\n#{diagnostics}"
      # Still the same nspawn a little later: not one attempt of a restart loop.
      sleep 10
      expect(clone_unit('clone1')).to eq(back), diagnostics
      apply_and_settle(class_manifest(num_clones: 2), expect_first: 0)
    end
  end

  context 'a clone stopped while its agent held the SSL and run locks' do
    it 'boots without them and runs the agent' do
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone2', timeout: 120)
      # Where each lock is on the host while the clone is stopped: the SSL
      # lock in the clone's kept SSL directory (bound at its ssldir), the run
      # lock in its upper layer.
      locks = ["/var/lib/puppet-clone-army/.ssl/clone2.#{host_certname}/ssl.lock",
               '/var/lib/puppet-clone-army/clone2-overlay/var/cache/puppet/state/agent_catalog_run.lock']
      locks.each do |lock|
        on_sandbox!('sh', '-c', 'mkdir -p "$(dirname "$1")" && echo 1 > "$1"', 'sh', lock, timeout: 30)
      end
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'start', '--', 'clone2', timeout: 300)
      expect(wait_for(timeout: 120) { running?(['clone2']) }).to be_truthy, diagnostics
      # Running means machined registered the clone; its own bus answers a moment later,
      # and on a busy host that moment can be seconds.
      result = nil
      answered = wait_for(timeout: 120) do
        result = on_sandbox('systemctl', '-M', 'clone2', 'show', '-p', 'Result', '-p', 'ExecMainStatus',
                            'clone-army-stale-locks.service', timeout: 30)
        result.exitstatus.zero?
      end
      expect(answered).to be_truthy, result.to_s
      expect(result.stdout.lines.map(&:strip)).to include('Result=success', 'ExecMainStatus=0'), result.to_s
      locks.each { |lock| expect(on_sandbox('test', '-e', lock, timeout: 30).exitstatus).to eq(1), lock }
      run = on_sandbox(SandboxHarness::HELPER, 'exec', '--clone', 'clone2', '--timeout', '300', '--format', 'json', '--',
                       *SandboxHarness::AGENT_RUN, timeout: 400)
      exit_code = JSON.parse(run.stdout).dig('result', 'clones', 0, 'exit_code')
      expect([0, 2]).to include(exit_code), run.to_s
    end
  end

  context 'clone-army exec and report' do
    let(:certnames) { %w[clone1 clone2].map { |c| "#{c}.#{host_certname}" } }

    it 'runs puppet agent -t in every clone, one at a time, with exit codes and times' do
      result = on_sandbox(SandboxHarness::HELPER, 'exec', '--all', '--concurrency', '1', '--timeout', '300', '--format', 'json', '--',
                          *SandboxHarness::AGENT_RUN, timeout: 700)
      expect(result.exitstatus).to eq(0), result.to_s
      doc = JSON.parse(result.stdout)
      expect(doc).to include('ok' => true), result.to_s
      clones = doc['result']['clones']
      expect(clones.map { |c| c['name'] }).to eq(%w[clone1 clone2])
      clones.each do |c|
        expect(c['exit_code']).to(satisfy { |code| [0, 2].include?(code) }, "#{c['name']}: #{c.inspect}")
        expect(c['seconds']).to be > 0
        expect(c['error']).to be_nil
      end
      expect(doc['result']['summary']).to include('count' => 2, 'concurrency' => 1, 'not_run' => 0)
    end

    it 'reports every clone with status, fleet p50/p95 and the server section' do
      ca = on_sandbox!('puppet', 'config', 'print', 'localcacert', '--section', 'agent', timeout: 60).stdout.strip
      ca = '/etc/puppet/puppetserver/ca/ca_crt.pem' unless on_sandbox('test', '-s', ca, timeout: 30).exitstatus.zero?
      result = on_sandbox(SandboxHarness::HELPER, 'report', '--server', "https://#{SandboxHarness::SERVER}:8140", '--ca-cert', ca,
                          '--format', 'json', timeout: 120)
      expect(result.exitstatus).to eq(0), result.to_s
      report = JSON.parse(result.stdout).fetch('result')
      by_name = report['clones'].to_h { |c| [c['name'], c] }
      expect(by_name.keys).to contain_exactly('clone1', 'clone2')
      by_name.each_value do |c|
        expect(c).to include('state' => 'running'), c.inspect
        expect(%w[changed unchanged]).to include(c['status']), c.inspect
      end
      expect(report['fleet']['total_time']).to include('count' => 2)
      expect(report['fleet']['total_time']['p50']).to be_a(Numeric)
      # Two clones are too few for a p95 (20 values): the slow end is their max, and says so.
      expect(report['fleet']['total_time']).to include('p95' => nil, 'tail' => { 'of' => 'max', 'value' => a_kind_of(Numeric) })
      server = report['server']
      expect(server).to include('ok' => true, 'error' => nil), server.inspect
      expect(server['jruby']).to include('num_jrubies' => a_kind_of(Integer)), server['jruby'].inspect
    end
  end

  context "changing server to another name of the server (#{SandboxHarness::SERVER_ALIAS})" do
    it 're-points every clone without rebuilding the base' do
      created = base_json['created_at']
      expect(created).not_to be_nil
      apply_and_settle(class_manifest(server: SandboxHarness::SERVER_ALIAS, num_clones: 2))
      %w[clone1 clone2].each do |c|
        printed = in_clone(c, 'puppet', 'config', 'print', 'server', '--section', 'agent')
        expect(printed.exitstatus).to eq(0), printed.to_s
        expect(printed.stdout.strip).to eq(SandboxHarness::SERVER_ALIAS), printed.to_s
      end
      expect(base_json['created_at']).to eq(created)
      expect_marker
      # And the agent reaches the server under that name (its certificate names it).
      run = on_sandbox(SandboxHarness::HELPER, 'exec', '--clone', 'clone1', '--format', 'json', '--', *SandboxHarness::AGENT_RUN, timeout: 400)
      entry = JSON.parse(run.stdout)['result']['clones'].first
      expect([0, 2]).to include(entry['exit_code']), entry.inspect
    end
  end

  context "run_mode => 'timer' with the suite's runinterval and generated_facts => 5" do
    let(:certnames) { %w[clone1 clone2].map { |c| "#{c}.#{host_certname}" } }

    # When the clone's first timer run of this boot began (epoch seconds from its
    # journal), 0 before there is one.
    def first_timer_run(clone)
      log = in_clone(clone, 'journalctl', '--no-pager', '-b', '-o', 'short-unix', '-u', 'clone-army-agent.service')
      log.stdout.lines.first.to_s.split.first.to_f
    end

    # Whether the clone's timer has run and its report reached the server: a report
    # newer than the run's start (the daemon's runs ended with the boot before it).
    def timer_run_reported?(clone)
      started = first_timer_run(clone)
      started.positive? && newest_report_time("#{clone}.#{host_certname}") > started
    end

    it 'switches the clones to timer runs that reach the server' do
      before = %w[clone1 clone2].to_h { |c| [c, clone_unit(c)[:pid]] }
      apply_and_settle(class_manifest(num_clones: 2, run_mode: 'timer', generated_facts: 5))
      # The apply restarts the running clones itself, so that their systemd reads the new
      # run units (REFERENCE: run_mode); nothing is restarted by hand here.
      expect_running(%w[clone1 clone2])
      %w[clone1 clone2].each do |c|
        now = clone_unit(c)
        expect(now[:pid]).to be_positive, "#{c}: no MainPID\n#{diagnostics}"
        expect(now[:pid]).not_to eq(before[c]), "#{c} was not restarted by the apply (MainPID #{before[c]})\n#{diagnostics}"
      end
      %w[clone1 clone2].each do |c|
        timer = wait_for(timeout: 60, interval: 2) do
          in_clone(c, 'systemctl', 'is-active', 'clone-army-agent.timer').stdout.strip == 'active'
        end
        expect(timer).to be_truthy, "#{c}: clone-army-agent.timer not active\n#{diagnostics}"
        daemon = in_clone(c, 'systemctl', 'is-active', 'puppet.service').stdout.strip
        expect(daemon).not_to eq('active'), "#{c}: the agent daemon still runs in timer mode"
      end
      reported = wait_for(timeout: 360, interval: 5) { %w[clone1 clone2].all? { |c| timer_run_reported?(c) } }
      expect(reported).to be_truthy,
                          "no report from a timer run of: #{%w[clone1 clone2].reject { |c| timer_run_reported?(c) }}\n" \
                          "#{diagnostics}"
      runs = in_clone('clone1', 'journalctl', '--no-pager', '-u', 'clone-army-agent.service', '-o', 'cat')
      expect(runs.stdout).to match(%r{Applied catalog|Finished|Started}), runs.to_s
    end

    # Both clones were restarted by the same apply, in one wave (ramp_up 0), so
    # their first timer runs are as far apart as their phases: clone1 is phase 0
    # of 2 (at its start), clone2 phase 1 of 2 (half of the interval later).
    it 'runs clone2 half an interval after clone1 (phases 0 and 1 of 2)' do
      half = SandboxHarness::RUNINTERVAL / 2
      first_run = %w[clone1 clone2].to_h { |c| [c, first_timer_run(c)] }
      expect(first_run.values).to all(be_positive), "#{first_run}\n#{diagnostics}"
      apart = first_run['clone2'] - first_run['clone1']
      expect(apart).to be_within(15).of(half), "first runs #{first_run}: #{apart.round(1)} s apart, not ~#{half}"
    end

    it "shows the clones' generated facts on the server" do
      found = wait_for(timeout: 60, interval: 3) do
        certnames.all? do |cert|
          # Puppet 7's server caches facts as JSON in server_data (yaml/ before).
          on_sandbox('sh', '-c', 'cat /var/lib/puppetserver/server_data/facts/"$1".json ' \
                                 '/var/lib/puppetserver/yaml/facts/"$1".yaml 2>/dev/null',
                     'sh', cert, timeout: 30).stdout.include?('clone_army_fact_0001')
        end
      end
      expect(found).to be_truthy, on_sandbox('sh', '-c', 'ls -l /var/lib/puppetserver/server_data/facts',
                                             timeout: 30).to_s
    end
  end

  context 'a restart of the host' do
    it 'brings the server and every clone back through puppet-clone-army.target, with no apply' do
      SandboxHarness.restart
      expect_running(%w[clone1 clone2], timeout: 300)
      expect(unit_property('puppet-clone-army.target', 'ActiveState')).to eq('active')
      expect(machine_mounts).to include('/var/lib/machines/clone1', '/var/lib/machines/clone2')
      expect_marker
    end

    it 'is still converged (a second apply changes nothing)' do
      result = SandboxHarness.apply(class_manifest(num_clones: 2, run_mode: 'timer', generated_facts: 5), timeout: 600)
      expect(result.exitstatus).to eq(0), result.to_s
    end
  end
end

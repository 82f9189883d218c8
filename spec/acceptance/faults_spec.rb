# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# Faults, each made for real on the sandbox host the suite shares:
# no D-Bus, two clone-army at once, a clone create killed half-way, an orphan
# overlay mount, a server the clones cannot reach (by name, or on a port
# nothing listens on), a full disk under a base build. Runs after
# clone_army_spec.rb (clone1 and clone2 running, server
# `puppet`, the default run mode) and leaves exactly that behind for the specs
# after it: every example restores what it changed in an `ensure`.
RSpec.describe 'clone_army under faults' do
  helper = SandboxHarness::HELPER
  state_dir = '/var/lib/puppet-clone-army'
  lock_file = "#{state_dir}/.lock"

  # The helper's envelope, decoded; raises with the whole result when it is not JSON.
  def envelope(result)
    JSON.parse(result.stdout)
  rescue JSON::ParserError
    raise "no JSON envelope on stdout: #{result}"
  end

  def settle_fleet
    first = SandboxHarness.apply(class_manifest(num_clones: 2), timeout: 600)
    expect([0, 2]).to include(first.exitstatus), first.to_s
    expect(wait_for(timeout: 120) { (['clone1', 'clone2'] - machines).empty? }).to be_truthy, diagnostics
  end

  context 'without D-Bus (DBUS_SYSTEM_BUS_ADDRESS names a socket that does not exist)' do
    it 'fails at once with kind systemd, naming D-Bus and the bus, and never hangs' do
      started = Time.now
      result = on_sandbox('env', 'DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/no-such-bus', helper, 'clone', 'list', '--format', 'json',
                          timeout: 90)
      elapsed = Time.now - started
      expect(result.exitstatus).to eq(1), result.to_s
      error = envelope(result).fetch('error')
      expect(error['kind']).to eq('systemd'), result.to_s
      expect(error['message']).to include('D-Bus', 'systemd', '/run/no-such-bus')
      # The helper's own deadline is 30 s; a missing socket fails much sooner.
      expect(elapsed).to be < 35
    end
  end

  context 'two clone-army at once (the lock held by another process for 8 s)' do
    # Holds the helper's lock with flock(1) in the background while argv runs,
    # then prints argv's exit code and how long it took.
    def with_lock_held(lock_file, *argv)
      script = <<~'SH'
        lock=$1; shift
        flock "$lock" sleep 8 & holder=$!
        sleep 1
        start=$(date +%s)
        "$@"; rc=$?
        wait "$holder"
        echo "rc=$rc seconds=$(( $(date +%s) - start ))" >&2
      SH
      on_sandbox('sh', '-c', script, 'sh', lock_file, *argv, timeout: 180)
    end

    it 'makes the CLI wait, saying so on stderr, then succeed' do
      # `clone configure` takes the lock even when it changes nothing.
      result = with_lock_held(lock_file, helper, 'clone', 'configure', 'clone2', '--server', SandboxHarness::SERVER)
      expect(result.stderr).to include('waiting for lock'), result.to_s
      expect(result.stderr).to match(%r{rc=0 seconds=([5-9]|\d\d)}), result.to_s
      expect(envelope(result)).to include('ok' => true)
      expect(machines).to include('clone1', 'clone2')
    end

    it 'makes puppet resource wait, then succeed' do
      result = with_lock_held(lock_file, 'puppet', 'resource', '--color=false', 'clone_army_clone', 'clone3',
                              'ensure=present', "base=#{base_json.fetch('name')}", "server=#{SandboxHarness::SERVER}",
                              "certname=clone3.#{host_certname}")
      expect(result.stderr).to match(%r{rc=0 seconds=([5-9]|\d\d)}), result.to_s
      expect(result.stdout).to match(%r{ensure\s*=> '(present|stopped|running)'}), result.to_s
      expect(clone_list.map { |c| c['name'] }).to include('clone3')
    ensure
      on_sandbox(helper, 'clone', 'remove', 'clone3', timeout: 180)
    end
  end

  context 'a clone create killed half-way (CLONE_ARMY_FAULT_AFTER, a real SIGKILL)' do
    it 'fails that apply, and the next apply converges the half-made clone3; the one after changes nothing' do
      # The hook acts only under the test root guard; the sandbox's root is the test root.
      killed = on_sandbox('env', 'CLONE_ARMY_ROOT=/', 'CLONE_ARMY_FAULT_AFTER=clone-create:mount-unit-written',
                          'puppet', 'apply', '--detailed-exitcodes', '--color=false', '-e',
                          class_manifest(num_clones: 3), timeout: 600)
      expect(killed.exitstatus).to eq(6).or(eq(4)), killed.to_s
      expect(killed.output).to include('clone3'), killed.to_s
      # Half made: its mount unit is there, its service is not running, and the
      # helper says so with the command that finishes it.
      expect(on_sandbox('test', '-e', '/etc/systemd/system/var-lib-machines-clone3.mount').exitstatus).to eq(0)
      expect(machines).not_to include('clone3')
      clone3 = clone_list.find { |c| c['name'] == 'clone3' }
      expect(clone3['problems'].map { |p| p['kind'] }).to include('incomplete'), clone3.inspect
      listing = on_sandbox!('puppet', 'resource', '--color=false', 'clone_army_clone', 'clone3', timeout: 120)
      expect(listing.stdout).to match(%r{ensure\s*=> 'incomplete'}), listing.to_s

      converge = SandboxHarness.apply(class_manifest(num_clones: 3), timeout: 600)
      expect(converge.exitstatus).to eq(2), converge.to_s
      expect(converge.stdout).to include('finished (was incomplete)'), converge.to_s
      expect(wait_for(timeout: 120) { machines.include?('clone3') }).to be_truthy, diagnostics
      again = SandboxHarness.apply(class_manifest(num_clones: 3), timeout: 600)
      expect(again.exitstatus).to eq(0), again.to_s
    ensure
      shrink = SandboxHarness.apply(class_manifest(num_clones: 2), timeout: 600)
      expect([0, 2]).to include(shrink.exitstatus), shrink.to_s
      expect(clone_traces('clone3')).to eq([])
    end
  end

  context 'an overlay mount that no mount unit owns (as a crash leaves it)' do
    it 'is reported by clone list with the exact command that fixes it, and that command does' do
      base = base_json.fetch('name')
      on_sandbox!('sh', '-c', <<~SH, timeout: 60)
        set -e
        mkdir -p /var/lib/machines/ghost #{state_dir}/ghost-overlay #{state_dir}/ghost-workdir
        mount -t overlay overlay -o lowerdir=#{state_dir}/#{base},upperdir=#{state_dir}/ghost-overlay,workdir=#{state_dir}/ghost-workdir /var/lib/machines/ghost
      SH
      listing = envelope(on_sandbox!(helper, 'clone', 'list', '--format', 'json', timeout: 60))
      problem = listing['result']['problems'].find { |p| p['kind'] == 'orphan-mount' }
      expect(problem).not_to be_nil, listing.inspect
      expect(problem['message']).to include('/var/lib/machines/ghost')
      expect(problem['fix']).to eq('umount -- /var/lib/machines/ghost && clone-army clone remove -- ghost')

      fixed = on_sandbox('sh', '-c', "PATH=/usr/local/sbin:$PATH; #{problem['fix']}", timeout: 120)
      expect(fixed.exitstatus).to eq(0), fixed.to_s
      after = envelope(on_sandbox!(helper, 'clone', 'list', '--format', 'json', timeout: 60))
      expect(after['result']['problems']).to eq([])
      expect(clone_traces('ghost')).to eq([])
      # The fleet did not notice.
      expect(machines).to include('clone1', 'clone2')
    ensure
      on_sandbox('sh', '-c', 'umount /var/lib/machines/ghost 2>/dev/null; ' \
                             "rm -rf /var/lib/machines/ghost #{state_dir}/ghost-overlay #{state_dir}/ghost-workdir",
                 timeout: 60)
    end
  end

  context 'a server the clones cannot reach (/etc/hosts points puppet at 127.0.2.254)' do
    # The clones see the sandbox's /etc/hosts through a bind mount of that file,
    # so it is rewritten in place (same inode), never replaced. `puppet` is taken
    # off every line (the server keeps its other names) and given its own line.
    def point_puppet_at(address)
      on_sandbox!('sh', '-c', <<~'SH', 'sh', address, timeout: 60)
        [ -e /root/hosts.faults ] || cp /etc/hosts /root/hosts.faults
        { printf '%s\tpuppet\n' "$1"
          awk '{ line = $1; n = 0
                 for (i = 2; i <= NF; i++) if ($i != "puppet") { line = line " " $i; n++ }
                 if (n > 0 || NF == 0) print line }' /root/hosts.faults; } > /root/hosts.new
        cat /root/hosts.new > /etc/hosts
      SH
    end

    def restore_hosts
      on_sandbox('sh', '-c', '[ -e /root/hosts.faults ] && cat /root/hosts.faults > /etc/hosts && rm -f /root/hosts.faults /root/hosts.new',
                 timeout: 60)
    end

    # One agent run in every clone (without the cached catalog, so a run that
    # gets no catalog fails), then the report's clones by name.
    def run_and_report(*agent_flags)
      on_sandbox(SandboxHarness::HELPER, 'exec', '--all', '--concurrency', '2', '--timeout', '300', '--',
                 *SandboxHarness::AGENT_RUN, *agent_flags, timeout: 400)
      result = on_sandbox!(SandboxHarness::HELPER, 'report', '--format', 'json', timeout: 120)
      JSON.parse(result.stdout).fetch('result').fetch('clones').to_h { |c| [c['name'], c] }
    end

    # Every clone's next run fails, each of `texts` in its failure. A scheduled
    # run of the daemon (which falls back to its cached catalog) can land
    # between the run and the report: a few bounded tries.
    def expect_every_run_to_fail_with(*texts)
      failing = nil
      wait_for(timeout: 300, interval: 1) do
        failing = run_and_report('--no-usecacheonfailure')
        failing.values.all? { |c| c['status'] == 'failed' && texts.all? { |text| c['failure'].to_s.include?(text) } }
      end
      failing.each_value do |c|
        expect(c).to include('status' => 'failed', 'state' => 'running'), c.inspect
        texts.each { |text| expect(c['failure']).to include(text), c.inspect }
      end
    end

    # Every clone's next run succeeds again.
    def expect_every_run_to_succeed
      recovered = nil
      wait_for(timeout: 300, interval: 1) do
        recovered = run_and_report
        recovered.values.all? { |c| %w[changed unchanged].include?(c['status']) }
      end
      recovered.each_value do |c|
        expect(%w[changed unchanged]).to include(c['status']), c.inspect
        expect(c['failure']).to be_nil
      end
    end

    it 'shows every clone failing with "Connection refused" in the report, and they recover' do
      point_puppet_at('127.0.2.254')
      expect_every_run_to_fail_with('Connection refused')
      restore_hosts
      expect_every_run_to_succeed
    ensure
      restore_hosts
    end

    it 'sends the clones to server_port: refused on 8141, where nothing listens, and back on 8140' do
      # Clones with certificates, whose runs get as far as asking for a catalog.
      settle_fleet
      expect_every_run_to_succeed

      moved = SandboxHarness.apply(class_manifest(num_clones: 2, server_port: 8141), timeout: 600)
      expect([0, 2]).to include(moved.exitstatus), moved.to_s
      expect_every_run_to_fail_with('Connection refused', '8141')

      back = SandboxHarness.apply(class_manifest(num_clones: 2, server_port: 8140), timeout: 600)
      expect(back.exitstatus).to eq(2), back.to_s
      expect_every_run_to_succeed
    ensure
      # The specs after this one expect clones without a port. A running clone
      # holds its puppet.conf by inode, so the file is rewritten in place.
      on_sandbox('sh', '-c', <<~'SH', timeout: 60)
        for conf in /var/lib/puppet-clone-army/clone*-config/puppet.conf; do
          grep -v '^serverport = ' "$conf" > /root/puppet.conf.new
          cat /root/puppet.conf.new > "$conf"
        done
        rm -f /root/puppet.conf.new
      SH
    end
  end

  context 'a full disk under a base build (the helper root on a 70 MiB tmpfs)' do
    root = '/root/clone-army-full'

    it 'fails with kind no-space, removes its staging directory and leaves the other base byte for byte' do
      base = base_json
      on_sandbox!('sh', '-c', <<~SH, timeout: 60)
        set -e
        mkdir -p #{root}
        mount -t tmpfs -o size=70m tmpfs #{root}
        mkdir -p #{root}/etc #{root}#{state_dir}/old/etc/clone-army #{root}/usr/share/keyrings
        cp /etc/os-release #{root}/etc/os-release
        cp /usr/share/keyrings/debian-archive-keyring.gpg #{root}/usr/share/keyrings/
        cp #{state_dir}/#{base['name']}/etc/clone-army/base.json #{root}#{state_dir}/old/etc/clone-army/base.json
        cp #{state_dir}/#{base['name']}/etc/os-release #{root}#{state_dir}/old/etc/os-release
      SH
      checksum = ['sh', '-c', "cd #{root}#{state_dir}/old && find . -type f -exec sha256sum {} + | sort"]
      before = on_sandbox!(*checksum, timeout: 60).stdout

      started = Time.now
      result = on_sandbox('env', "CLONE_ARMY_ROOT=#{root}", helper, 'base', 'create', 'fresh', '--os', 'debian',
                          '--release', base['release'], '--mirror', base['mirror'], timeout: 900)
      SandboxHarness.log format('base create on the full disk failed after %<s>.0f s', s: Time.now - started)
      expect(result.exitstatus).to eq(1), result.to_s
      error = envelope(result).fetch('error')
      expect(error['kind']).to eq('no-space'), result.to_s
      expect(error['message']).to include("#{root}#{state_dir}")
      listing = on_sandbox!('ls', '-A', "#{root}#{state_dir}", timeout: 60).stdout.split
      expect(listing).to include('old')
      expect(listing).not_to include('fresh', '.staging-fresh')
      expect(on_sandbox!(*checksum, timeout: 60).stdout).to eq(before)
    ensure
      on_sandbox('sh', '-c', "umount #{root} && rmdir #{root}", timeout: 60)
    end
  end

  context 'afterwards' do
    it 'leaves clone1 and clone2 running with server puppet, converged' do
      settle_fleet
      result = SandboxHarness.apply(class_manifest(num_clones: 2), timeout: 600)
      expect(result.exitstatus).to eq(0), result.to_s
    end
  end
end

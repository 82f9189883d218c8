# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# A clone is hostile ground: its root (the agent, applying whatever the server
# under test sends) plants symlinks (absolute and relative, to host files and
# directories), FIFOs and huge files at every path the helper or nspawn touches
# in a clone, both while the clone runs and, from the host, in the upper layer
# of a stopped clone. Then the class changes facts, server, run mode, limits
# and secrets, `clone-army report` and `exec` run, and the hostile clones are
# removed. No host file outside the clones' own directories may be created,
# changed or removed (hashed before and after), nothing may hang, the good
# clone converges, and every refusal names its path.
RSpec.describe 'a hostile clone' do
  # Where the clone-army keeps each clone's own things, and what the host
  # changes by itself meanwhile (the server's, PuppetDB's and PostgreSQL's
  # state, written as the good clone reports): left out of the host's hash.
  def excluded
    ['/var/lib/puppet-clone-army', '/var/lib/machines', '/etc/systemd/nspawn', '/var/lib/puppetserver',
     '/var/lib/puppetdb', '/var/lib/postgresql',
     '/var/lib/systemd', '/var/lib/apt', '/var/lib/dpkg', '/var/lib/logrotate', '/var/lib/private']
  end

  # The host's /etc, /root, /usr/local and /var/lib, but what `excluded` names
  # and the clones' units: every file's hash, every link's target, every directory.
  def host_hash
    prune = excluded.map { |path| "-path #{path}" } +
            ["-path '/etc/systemd/system/puppet-clone-army*'", "-path '/etc/systemd/system/var-lib-machines-*'"]
    script = <<~SH
      find /etc /root /usr/local /var/lib -xdev \\( #{prune.join(' -o ')} \\) -prune -o \\
        \\( -type f -exec sha256sum {} + \\) -o \\( -type l -printf 'link %p -> %l\\n' \\) -o \\( -type d -printf 'dir %p\\n' \\) |
        LC_ALL=C sort
    SH
    on_sandbox!('sh', '-c', script, timeout: 120).stdout.lines.map(&:chomp)
  end

  CLONES = ['clone1', 'clone2', 'clone3', 'clone4'].freeze
  HOSTILE = ['clone2', 'clone3', 'clone4'].freeze

  def hostile_manifest(**params)
    class_manifest(num_clones: CLONES.size, run_mode: 'manual', **params)
  end

  # What a clone's root plants while it runs, inside the clone. Its root holds
  # CAP_SYS_ADMIN in its own mount namespace, so it can remount what the host
  # binds read-only read-write and plant in it (the host's config dir of the
  # clone), then unmount the binds and plant beneath them (for the next start);
  # and it plants where `report` reads.
  PLANT_RUNNING = <<~'SH'
    set -e
    units=/run/systemd/system.control
    mount -o remount,rw,bind "$units"
    rm -rf "$units/timers.target.wants" "$units/clone-army-agent.timer"
    ln -s /etc "$units/timers.target.wants"
    ln -s /etc/shadow "$units/clone-army-agent.timer"
    mount -o remount,rw,bind /etc/facter/facts.d
    rm -f /etc/facter/facts.d/clone_army.json
    mkfifo /etc/facter/facts.d/clone_army.json
    ln -s /root/.ssh /etc/facter/facts.d/clone_army_generated
    # Where report reads: an absolute link to a host secret, a relative one that
    # climbs out of the upper layer.
    mkdir -p /var/cache/puppet/public
    rm -f /var/cache/puppet/public/last_run_summary.yaml
    ln -s /etc/shadow /var/cache/puppet/public/last_run_summary.yaml
    rm -rf /var/cache/puppet/state
    ln -s ../../../../../../../../root/escape-target /var/cache/puppet/state
    # Beneath the binds, for the next start: the facts dir, the hostname,
    # puppet.conf's dir.
    umount "$units" /etc/facter/facts.d /etc/hostname
    rm -rf /etc/facter/facts.d /etc/hostname
    ln -s /root/escape-target /etc/facter/facts.d
    ln -s /etc/passwd /etc/hostname
    ln -sfn /usr/local/sbin /etc/puppet/csr_attributes.yaml
  SH

  # What is planted in a stopped clone's upper layer, from the host (the clone
  # could have left it there before it stopped): links where the host binds,
  # and where report reads a FIFO (clone3, behind a summary that says the run
  # failed) or a huge file (clone4).
  def plant_stopped(clone)
    script = <<~SH
      set -e
      u=/var/lib/puppet-clone-army/#{clone}-overlay
      mkdir -p "$u/var/cache/puppet/public" "$u/var/cache/puppet/state" "$u/etc/puppet" "$u/etc/facter" "$u/run/systemd"
      summary="$u/var/cache/puppet/public/last_run_summary.yaml"
      if [ "#{clone}" = clone3 ]; then
        printf -- '---\\nversion:\\n  puppet: 8.0.0\\ntime:\\n  last_run: %s\\nevents:\\n  failure: 1\\n' "$(date +%s)" > "$summary"
        mkfifo "$u/var/cache/puppet/state/last_run_report.yaml"
      else
        rm -f "$summary"
        truncate -s 40M "$summary"
      fi
      ln -sfn /root/escape-target "$u/etc/facter/facts.d"
      ln -sfn ../../../../../../../../../../root "$u/etc/puppet/puppet.conf"
      ln -sfn /etc "$u/run/systemd/system.control"
      ln -sfn /var/lib/puppet "$u/etc/hostname"
    SH
    on_sandbox!('sh', '-c', script, timeout: 60)
  end

  before(:all) do
    on_sandbox!('mkdir', '-p', '/root/escape-target', timeout: 30)
    result = SandboxHarness.apply(hostile_manifest, timeout: 900)
    raise "the hostile fleet did not come up:\n#{result}" unless [0, 2].include?(result.exitstatus)

    ok = wait_for(timeout: 180, interval: 3) { (CLONES - machines).empty? && bus_up?('clone2') }
    raise "#{CLONES.join(', ')} are not all running (with clone2's bus up):\n#{diagnostics}" unless ok

    # clone2 plants while it runs; clone3 and clone4 are stopped and planted from the host.
    planted = in_clone('clone2', 'sh', '-c', PLANT_RUNNING)
    raise "planting in clone2 failed: #{planted}" unless planted.exitstatus.zero?

    on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone3', 'clone4', timeout: 120)
    plant_stopped('clone3')
    plant_stopped('clone4')
    @before = host_hash
  end

  after(:all) do
    # Back to the two fresh clones the next file expects.
    on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', '--', *HOSTILE, timeout: 300)
    SandboxHarness.apply(class_manifest(num_clones: 2), timeout: 900)
  end

  it 'lets the class change facts, server, run mode, limits and secrets: the good clone converges' do
    manifest = "class { 'clone_army': server => '#{SandboxHarness::SERVER_ALIAS}', num_clones => #{CLONES.size}, " \
               "runinterval => #{SandboxHarness::RUNINTERVAL}, run_mode => 'timer', memory_max => '768M', " \
               "fleet_facts => { 'hostile_test' => 'round2' }, root_password_hash => Sensitive('$6$salt$c2VjcmV0aGFzaA') }"
    result = SandboxHarness.apply(manifest, timeout: 900)
    # A hostile clone may fail to start (it broke its own tree); nothing else may fail.
    expect([2, 6]).to include(result.exitstatus), result.to_s
    failing = result.output.lines.grep(%r{^Error:}).reject { |line| line.match?(%r{clone[234]}) }
    expect(failing).to eq([]), result.to_s
    clone1 = clone_list.find { |c| c['name'] == 'clone1' }
    expect(clone1).to include('server' => SandboxHarness::SERVER_ALIAS, 'state' => 'running', 'run_mode' => 'timer',
                              'memory_max' => '768M', 'facts' => { 'hostile_test' => 'round2' })
  end

  it 'gives the hostile clones what the host binds only inside their own trees' do
    # Started again after the run mode change: nspawn resolves each bind in the clone.
    ls = on_sandbox!('ls', '-A', '/root/escape-target', timeout: 30)
    expect(ls.stdout).to eq(''), ls.to_s
  end

  it 'reports every clone without hanging, each refusal naming its path' do
    started = Time.now
    result = on_sandbox(SandboxHarness::HELPER, 'report', '--interval', SandboxHarness::RUNINTERVAL.to_s, timeout: 120)
    expect(Time.now - started).to be < 60
    expect(result.exitstatus).to eq(0), result.to_s
    clones = JSON.parse(result.stdout)['result']['clones'].to_h { |c| [c['name'], c] }
    expect(result.stdout).not_to include('root:'), 'the host shadow file surfaced in the report'
    # clone2's summary: a link to the host's /etc/shadow, refused by name.
    if clones['clone2']['status'] == 'unreadable'
      expect(clones['clone2']['error']).to include('clone2-overlay/var/cache/puppet/public/last_run_summary.yaml',
                                                   'it is a symlink')
    end
    # clone3's report file is a FIFO behind a failed summary: refused, not read.
    expect(clones['clone3']['failure']).to include('clone3-overlay/var/cache/puppet/state/last_run_report.yaml',
                                                   'it is a FIFO')
    # clone4's summary is 40 MiB: refused, not read.
    expect(clones['clone4']['status']).to eq('unreadable')
    expect(clones['clone4']['error']).to include('clone4-overlay/var/cache/puppet/public/last_run_summary.yaml',
                                                 'bytes, more than the')
    table = on_sandbox(SandboxHarness::HELPER, 'report', '--format', 'table', timeout: 120)
    expect(table.exitstatus).to eq(0), table.to_s
    expect(table.stdout).not_to include("\e")
  end

  it 'runs exec in every clone without hanging' do
    started = Time.now
    result = on_sandbox(SandboxHarness::HELPER, 'exec', '--all', '--timeout', '60', '--', 'true', timeout: 300)
    expect(Time.now - started).to be < 240
    expect(result.exitstatus).to eq(0), result.to_s
    entries = JSON.parse(result.stdout)['result']['clones'].to_h { |c| [c['name'], c] }
    expect(entries.keys).to match_array(CLONES)
    expect(entries['clone1']['exit_code']).to eq(0)
  end

  it 'removes the hostile clones without following what they planted' do
    result = on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', '--', *HOSTILE, timeout: 300)
    expect(result.exitstatus).to eq(0), result.to_s
    expect(HOSTILE.flat_map { |clone| clone_traces(clone) }).to eq([])
  end

  it 'left every host file outside the clones\' own directories as it was' do
    after = host_hash
    expect(after - @before).to eq([]), "created or changed:\n#{(after - @before).join("\n")}"
    expect(@before - after).to eq([]), "changed or removed:\n#{(@before - after).join("\n")}"
  end
end

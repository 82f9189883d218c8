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
# clone converges, and every refusal names its path. Then a booted clone
# changes its certname and claims another clone's, and an apply source is
# opened to local users under a clone that was made with it.
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
    result = on_sandbox(SandboxHarness::HELPER, 'report', '--interval', SandboxHarness::RUNINTERVAL.to_s, '--format', 'json', timeout: 120)
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
    result = on_sandbox(SandboxHarness::HELPER, 'exec', '--all', '--timeout', '60', '--format', 'json', '--', 'true', timeout: 300)
    expect(Time.now - started).to be < 240
    expect(result.exitstatus).to eq(0), result.to_s
    entries = JSON.parse(result.stdout)['result']['clones'].to_h { |c| [c['name'], c] }
    expect(entries.keys).to match_array(CLONES)
    expect(entries['clone1']['exit_code']).to eq(0)
  end

  it 'keeps /var/lib/machines, where the clones\' roots are mounted, root\'s alone' do
    mode = on_sandbox!('stat', '-c', '%a %U', '/var/lib/machines', timeout: 30).stdout.strip
    expect(mode).to eq('700 root')
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

  # RSpec runs these groups after the examples above, the hostile clones removed.
  # A clone of its own (not one the class counts), created and booted by the
  # helper, so the SSL examples start from a clean, bound, booted clone.
  context 'whose kept SSL directory is whose' do
    def ssl_dir(certname)
      "/var/lib/puppet-clone-army/.ssl/#{certname}"
    end

    # clone5's certname after the first example changed it.
    def renamed
      "renamed5.#{host_certname}"
    end

    def files_in(dir)
      on_sandbox!('find', dir, '-printf', '%P\\n', timeout: 30).stdout.lines.map(&:strip).sort
    end

    before(:all) do
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'create', 'clone5', '--base', base_json['name'], '--server',
                  SandboxHarness::SERVER, '--certname', "clone5.#{host_certname}", '--start', timeout: 300)
      ok = wait_for(timeout: 180, interval: 3) { machines.include?('clone5') && bus_up?('clone5') }
      raise "clone5 did not boot:\n#{diagnostics}" unless ok
    end

    after(:all) do
      on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', '--forget-ssl', '--', 'clone5', timeout: 300)
    end

    it 'keeps the SSL bind of a booted clone through a certname change' do
      # The boot left the bind's mount point in the upper layer: the agent's ssldir.
      upper = on_sandbox('test', '-d', '/var/lib/puppet-clone-army/clone5-overlay/var/lib/puppet/ssl', timeout: 30)
      expect(upper.exitstatus).to eq(0), "the boot left no ssldir in clone5's upper layer\n#{diagnostics}"
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'configure', 'clone5', '--certname', renamed, timeout: 120)
      settings = on_sandbox!('cat', '/etc/systemd/nspawn/clone5.nspawn', timeout: 30).stdout
      expect(settings).to include("\nBind=#{ssl_dir(renamed)}:/var/lib/puppet/ssl\n"), settings
      # And the clone started again has it at its agent's ssldir.
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone5', timeout: 120)
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'start', '--', 'clone5', timeout: 300)
      expect(wait_for(timeout: 180, interval: 3) { bus_up?('clone5') }).to be_truthy, diagnostics
      mounted = in_clone('clone5', 'findmnt', '-n', '-o', 'TARGET', '/var/lib/puppet/ssl')
      expect(mounted.stdout.strip).to eq('/var/lib/puppet/ssl'), mounted.to_s
    end

    it "never lets a clone that claims another's certname make --forget-ssl remove that clone's keys" do
      victim = ssl_dir("clone1.#{host_certname}")
      before = files_in(victim)
      expect(before).to include('certs'), "clone1 has no certificate to lose: #{before}"
      # clone5's root rewrites the puppet.conf and hostname the host binds into
      # it, naming clone1's certname.
      claim = <<~SH
        set -e
        for f in /etc/puppet/puppet.conf /etc/hostname; do mount -o remount,rw,bind "$f"; done
        printf '[main]\\nserver = #{SandboxHarness::SERVER}\\ncertname = clone1.#{host_certname}\\n' > /etc/puppet/puppet.conf
        printf 'clone1.#{host_certname}\\n' > /etc/hostname
      SH
      claimed = in_clone('clone5', 'sh', '-c', claim)
      expect(claimed.exitstatus).to eq(0), claimed.to_s
      removed = on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', '--forget-ssl', '--', 'clone5', timeout: 300)
      expect(removed.exitstatus).to eq(0), removed.to_s
      expect(files_in(victim)).to eq(before)
      # clone5's own kept directory was the one forgotten.
      expect(on_sandbox('test', '-e', ssl_dir(renamed), timeout: 30).exitstatus).to eq(1)
      expect(clone_traces('clone5')).to eq([])
    end
  end

  # What every apply-mode clone runs as root comes from its apply source:
  # checked when given, and again by the clone's service before every start.
  context 'whose apply source is opened to local users after it was checked' do
    source = '/srv/hostile-apply'

    before(:all) do
      on_sandbox!('sh', '-c', "rm -rf #{source} && mkdir -p -m 0755 #{source}/manifests", timeout: 30)
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'create', 'clone6', '--base', base_json['name'], '--certname',
                  "clone6.#{host_certname}", '--run-mode', 'apply', '--apply-source', source, '--start', timeout: 300)
    end

    after(:all) do
      on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', '--', 'clone6', timeout: 300)
      on_sandbox('rm', '-rf', source, timeout: 30)
    end

    it 'keeps the clone from starting, whoever starts it, naming the source and why' do
      expect(machines).to include('clone6'), diagnostics
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', '--', 'clone6', timeout: 120)
      on_sandbox!('chmod', '0777', source, timeout: 30)
      started = on_sandbox(SandboxHarness::HELPER, 'clone', 'start', '--', 'clone6', timeout: 300)
      expect(started.exitstatus).to eq(1), started.to_s
      by_systemd = on_sandbox('systemctl', 'start', 'puppet-clone-army@clone6.service', timeout: 120)
      expect(by_systemd.exitstatus).not_to eq(0), by_systemd.to_s
      expect(machines).not_to include('clone6')
      journal = on_sandbox!('journalctl', '--no-pager', '-o', 'cat', '-u', 'puppet-clone-army@clone6.service',
                            timeout: 60).stdout
      expect(journal).to include('apply-source', "#{source} is writable by its group and by others (mode 777)")
      # Put right, it starts again.
      on_sandbox!('chmod', '0755', source, timeout: 30)
      on_sandbox!(SandboxHarness::HELPER, 'clone', 'start', '--', 'clone6', timeout: 300)
      expect(machines).to include('clone6'), diagnostics
    end
  end

end

# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# A host that runs a fleet of sharpie-clone_army 0.2.1, taken over by the
# class: its clones are stopped, their upper layers and the old base are
# moved aside into /var/lib/puppet-clone-army/sharpie-clone_army-0.2.1, its
# units replaced, and the new clones run and check in.
#
# Self-sufficient: it first applies the class with num_clones => 0 (which
# builds the suite's base and removes any clone an earlier spec left), then
# writes 0.2.1's units exactly as its manifests did, with a copy of that base
# (hard links) standing in for 0.2.1's el-7 sysroot, and starts two clones
# through them. Goes last in the suite order (after fleet_lifecycle_spec.rb):
# it leaves a fleet of two clones of this module, as clone_army_spec.rb does.
RSpec.describe 'migrating a sharpie-clone_army 0.2.1 fleet on a sandbox host' do
  clones = ['clone1', 'clone2'].freeze
  state = '/var/lib/puppet-clone-army'
  aside = "#{state}/sharpie-clone_army-0.2.1"
  units = '/etc/systemd/system'
  apply_timeout = Integer(ENV.fetch('FIRST_APPLY_TIMEOUT', 1200))
  boot_timeout = 120
  checkin_timeout = Integer(ENV.fetch('CHECKIN_TIMEOUT', 420))

  old_target = <<~UNIT
    [Unit]
    Description=Puppet Clone Army Containers
    PartOf=machines.target
    Before=machines.target

    [Install]
    WantedBy=machines.target
  UNIT
  old_template = <<~'UNIT'
    [Unit]
    Description=Puppet Agent Clone Army %I
    Documentation=man:systemd-nspawn(1)
    PartOf=puppet-clone-army.target
    Before=puppet-clone-army.target
    RequiresMountsFor=/var/lib/machines/%I

    [Service]
    ExecStart=/usr/bin/systemd-nspawn \
      --quiet \
      --keep-unit \
      --boot \
      --link-journal=try-guest \
      --machine=%I
    KillMode=mixed
    Type=notify
    RestartForceExitStatus=133
    SuccessExitStatus=133
    Slice=machine.slice
    Delegate=yes

    [Install]
    WantedBy=puppet-clone-army.target
  UNIT
  old_mount = lambda do |clone|
    <<~UNIT
      [Unit]
      PartOf=puppet-clone-army@#{clone}.service
      Before=puppet-clone-army@#{clone}.service

      [Mount]
      What=overlay
      Where=/var/lib/machines/#{clone}
      Type=overlay
      Options=lowerdir=#{state}/el-7,upperdir=#{state}/#{clone}-overlay,workdir=#{state}/#{clone}-workdir

      [Install]
      RequiredBy=puppet-clone-army@#{clone}.service
    UNIT
  end

  let(:certnames) { clones.map { |c| "#{c}.#{host_certname}" } }
  def manifest
    class_manifest(num_clones: 2)
  end

  # Writes content to path inside the sandbox.
  def put(path, content)
    on_sandbox!('sh', '-c', "mkdir -p \"$(dirname \"$1\")\" && cat > \"$1\" <<'EOF'\n#{content}EOF\n", 'sh', path,
                timeout: 30)
  end

  def overlay_lowerdir(clone)
    line = on_sandbox!('cat', '/proc/self/mountinfo', timeout: 30).stdout.lines
                                                                  .find { |l| l.split[4] == "/var/lib/machines/#{clone}" }
    line&.match(%r{lowerdir=([^,\s]+)})&.captures&.first
  end

  context 'a 0.2.1 fleet of two running clones' do
    before(:all) do
      prepare = SandboxHarness.apply(class_manifest(num_clones: 0), timeout: apply_timeout)
      raise "the preparing apply failed: #{prepare}" unless [0, 2].include?(prepare.exitstatus)

      base = JSON.parse(on_sandbox!(SandboxHarness::HELPER, 'base', 'list', '--format', 'json', timeout: 60).stdout)
                 .dig('result', 'bases', 0, 'name')
      raise 'no base after the preparing apply' unless base

      # Whatever an earlier run of this spec left aside.
      on_sandbox!('rm', '-rf', aside, "#{state}/el-7", timeout: 120)
      # 0.2.1's el-7 sysroot had no base.json: a hard-linked copy of the base without it.
      on_sandbox!('sh', '-c', "cp -al #{state}/#{base} #{state}/el-7 && rm -f #{state}/el-7/etc/clone-army/base.json",
                  timeout: 300)
      put("#{units}/puppet-clone-army.target", old_target)
      put("#{units}/puppet-clone-army@.service", old_template)
      clones.each do |clone|
        put("#{units}/var-lib-machines-#{clone}.mount", old_mount.call(clone))
        put("#{state}/#{clone}-overlay/etc/hostname", "#{clone}.#{host_certname}\n")
        on_sandbox!('mkdir', '-p', "#{state}/#{clone}-workdir", "/var/lib/machines/#{clone}", timeout: 30)
      end
      on_sandbox!('systemctl', 'daemon-reload', timeout: 60)
      on_sandbox!('systemctl', 'enable', 'puppet-clone-army.target', *clones.map { |c| "var-lib-machines-#{c}.mount" },
                  timeout: 60)
      on_sandbox!('systemctl', 'start', *clones.map { |c| "puppet-clone-army@#{c}" }, timeout: 180)
      booted = wait_for(timeout: boot_timeout, interval: 2) { (clones - machines).empty? }
      raise "the 0.2.1 clones never showed in machinectl list\n#{diagnostics}" unless booted

      # Something a user made in a clone: it lands in the clone's upper layer.
      made = wait_for(timeout: 60, interval: 3) do
        in_clone('clone1', 'sh', '-c', 'echo made-in-clone1 > /root/precious.txt').exitstatus.zero?
      end
      raise "could not write into the old clone1\n#{diagnostics}" unless made

      @started = sandbox_now
      @apply = SandboxHarness.apply(manifest, timeout: apply_timeout)
      @apply.output.lines.grep(%r{0\.2\.1}).each { |line| log line.chomp }
    end

    it 'was a 0.2.1 fleet: old units without a header, clones mounted over el-7' do
      expect(on_sandbox!('cat', "#{aside}/units/puppet-clone-army@.service", timeout: 30).stdout).to eq(old_template)
      expect(on_sandbox!('cat', "#{aside}/units/var-lib-machines-clone2.mount", timeout: 30).stdout)
        .to eq(old_mount.call('clone2'))
    end

    it 'applies with exit 2 and says in Puppet warnings where the old data went' do
      expect(@apply.exitstatus).to eq(2), @apply.to_s
      expect(@apply.output).to match(%r{Warning: .*moved #{state}/clone1-overlay to #{aside}/clone1-overlay}), @apply.to_s
      expect(@apply.output).to match(%r{Warning: .*moved #{state}/el-7 to #{aside}/el-7}), @apply.to_s
      expect(@apply.output).to match(%r{Warning: .*stopped the clones of sharpie-clone_army 0\.2\.1}), @apply.to_s
    end

    it "keeps the user's file at the documented place" do
      kept = on_sandbox('cat', "#{aside}/clone1-overlay/root/precious.txt", timeout: 30)
      expect(kept.exitstatus).to eq(0), kept.to_s
      expect(kept.stdout).to eq("made-in-clone1\n")
      expect(on_sandbox('test', '-d', "#{aside}/el-7/etc", timeout: 30).exitstatus).to eq(0)
      expect(on_sandbox('test', '-e', "#{state}/el-7", timeout: 30).exitstatus).to eq(1)
    end

    it 'replaces the old units: template and target are ours, the old links gone' do
      ['puppet-clone-army@.service', 'puppet-clone-army.target', 'var-lib-machines-clone1.mount'].each do |unit|
        text = on_sandbox!('cat', "#{units}/#{unit}", timeout: 30).stdout
        expect(text).to start_with('# Managed by clone-army '), "#{unit}: #{text}"
      end
      gone = on_sandbox('ls', '-d', "#{units}/machines.target.wants/puppet-clone-army.target",
                        "#{units}/puppet-clone-army@clone1.service.requires", timeout: 30)
      expect(gone.stdout).to be_empty, gone.to_s
    end

    it 'runs the new clones, over the new base' do
      seen = wait_for(timeout: boot_timeout, interval: 2) { (clones - machines).empty? }
      expect(seen).to be_truthy, diagnostics
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.each do |clone|
        expect(listed[clone]).to include('state' => 'running', 'mounted' => true), "#{listed[clone]}\n#{diagnostics}"
        expect(overlay_lowerdir(clone)).not_to include('el-7')
        expect(on_sandbox('test', '-e', "#{state}/#{clone}-overlay/root/precious.txt", timeout: 30).exitstatus).to eq(1)
      end
    end

    it 'has the new clones check in with the server' do
      fresh = wait_for(timeout: checkin_timeout) { certnames.all? { |c| newest_report_time(c) > @started } }
      expect(fresh).to be_truthy, "no report since the apply from #{certnames}\n#{diagnostics}"
    end

    it 'makes no change on a second apply (exit 0)' do
      again = SandboxHarness.apply(manifest, timeout: 600)
      expect(again.exitstatus).to eq(0), again.to_s
      expect(again.output).not_to match(%r{0\.2\.1}), again.to_s
      expect(machines).to include(*clones), diagnostics
    end
  end
end

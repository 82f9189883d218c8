# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# Masterless clones, end to end: the fleet that clone_army_spec.rb
# left (2 clones, daemon mode, reporting to the server) is switched to
# run_mode apply with an apply source on the sandbox host that declares
# clone_army::workload. The clones then run `puppet apply` of it on their
# own: the workload's files appear in their upper layers and change from run
# to run, their journals show the applied catalogs, and the server gets no
# report from them. At the end the fleet is put back as clone_army_spec.rb
# left it (default run mode, the server, 2 clones), for the specs after this.
RSpec.describe 'masterless clones (run_mode apply) on a sandbox host' do
  clones = ['clone1', 'clone2'].freeze
  source = '/srv/masterless-apply'
  workload_dir = '/var/tmp/masterless_workload'
  # The shortest runinterval the helper takes: clone2's first run comes 30 s
  # after its start, clone1's at once.
  runinterval = 60
  site_pp = <<~PP
    class { 'clone_army::workload':
      static_files   => 3,
      changing_files => 2,
      file_bytes     => 64,
      directory      => '#{workload_dir}',
    }
  PP
  apply_timeout = 300
  run_timeout = 150

  let(:certnames) { clones.map { |c| "#{c}.#{host_certname}" } }

  # A file of the workload in a clone's upper layer, read from the sandbox host
  # without entering the clone (nil while it is missing).
  def upper_file(clone, name, dir)
    result = on_sandbox('cat', "/var/lib/puppet-clone-army/#{clone}-overlay#{dir}/#{name}", timeout: 30)
    result.exitstatus.zero? ? result.stdout : nil
  end

  # Stop and start the clones, so that they boot with the new bind and run
  # units (a mode change reaches a running clone at its next start).
  def restart_clones(names)
    on_sandbox!(SandboxHarness::HELPER, 'clone', 'stop', *names, timeout: 180)
    on_sandbox!(SandboxHarness::HELPER, 'clone', 'start', *names, timeout: 180)
  end

  context 'switched to apply mode' do
    before(:all) do
      # The module's own manifests and types are all the workload needs; the
      # checkout (with its build output) is not copied.
      script = <<~SH
        set -e
        rm -rf #{source}
        mkdir -p #{source}/manifests #{source}/modules/clone_army
        cp -r /etc/puppet/code/modules/clone_army/manifests /etc/puppet/code/modules/clone_army/types #{source}/modules/clone_army/
        cat > #{source}/manifests/site.pp
      SH
      on_sandbox!('sh', '-c', "#{script.chomp} <<'EOF'\n#{site_pp}EOF\n", timeout: 60)
      @switch = SandboxHarness.apply(
        class_manifest(num_clones: clones.size, run_mode: 'apply', apply_source: source, runinterval: runinterval),
        timeout: apply_timeout,
      )
      restart_clones(clones)
      # Runs (and reports) of the old mode ended with the stop above.
      @switched_at = sandbox_now
    end

    it 'applies the class with changes and no error (exit 2)' do
      expect(@switch.exitstatus).to eq(2), @switch.to_s
      expect(@switch.output).not_to match(%r{^(Error|Warning):}), @switch.to_s
    end

    it 'lists the clones in apply mode with their source' do
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.each do |clone|
        expect(listed[clone]).to include('state' => 'running', 'run_mode' => 'apply', 'apply_source' => source,
                                         'runinterval' => runinterval),
                                 "#{clone}: #{listed[clone].inspect}\n#{diagnostics}"
      end
    end

    it 'runs the workload in every clone: its files appear in the upper layers' do
      done = wait_for(timeout: run_timeout) do
        clones.all? { |c| upper_file(c, 'static_3', workload_dir) && upper_file(c, 'changing_2', workload_dir) }
      end
      expect(done).to be_truthy, "no workload files after #{run_timeout}s\n#{diagnostics}"
      clones.each do |clone|
        static = upper_file(clone, 'static_1', workload_dir)
        expect(static.bytesize).to eq(64)
        expect(static).to start_with("clone_army workload: static file 1 of 3\n")
      end
    end

    it 'shows the applied catalog in the journal of clone-army-agent.service' do
      clones.each do |clone|
        journal = in_clone(clone, 'journalctl', '--no-pager', '-o', 'cat', '-u', 'clone-army-agent.service')
        expect(journal.stdout).to match(%r{Applied catalog in [0-9.]+ seconds}), "#{clone}: #{journal}"
      end
    end

    it 'changes the changing files at the next run, and not the static ones' do
      before = clones.to_h { |c| [c, [upper_file(c, 'changing_1', workload_dir), upper_file(c, 'static_1', workload_dir)]] }
      changed = wait_for(timeout: runinterval + 60, interval: 5) do
        clones.all? { |c| upper_file(c, 'changing_1', workload_dir) != before[c][0] }
      end
      journals = changed ? [] : clones.map { |c| in_clone(c, 'journalctl', '--no-pager', '-n', '40', '-u', 'clone-army-agent.service').to_s }
      expect(changed).to be_truthy, "changing_1 unchanged after #{runinterval + 60}s\n#{journals.join("\n")}\n#{diagnostics}"
      clones.each { |c| expect(upper_file(c, 'static_1', workload_dir)).to eq(before[c][1]) }
    end

    it 'sends no report to the server' do
      certnames.each do |certname|
        expect(newest_report_time(certname)).to be < @switched_at, "#{certname} reported after the switch"
      end
    end
  end

  # A noop fleet: the same catalogs evaluated, nothing changed, and the report
  # says what a real run would change (Puppet itself calls such runs unchanged).
  context 'in noop (agent_noop => true)' do
    before(:all) do
      @pids = clones.to_h { |c| [c, clone_unit(c)[:pid]] }
      @noop = SandboxHarness.apply(
        class_manifest(num_clones: clones.size, run_mode: 'apply', apply_source: source, runinterval: runinterval,
                       agent_noop: true),
        timeout: apply_timeout,
      )
      @since = sandbox_now
      @changing = clones.to_h { |c| [c, upper_file(c, 'changing_1', workload_dir)] }
    end

    # The clones' last runs as the helper reports them, by name.
    def last_runs
      JSON.parse(on_sandbox!(SandboxHarness::HELPER, 'report', '--format', 'json', timeout: 60).stdout)['result']['clones']
          .to_h { |c| [c['name'], c] }
    end

    it 'applies with changes and no error (exit 2), restarting no clone' do
      expect(@noop.exitstatus).to eq(2), @noop.to_s
      expect(@noop.output).not_to match(%r{^(Error|Warning):}), @noop.to_s
      clones.each { |c| expect(clone_unit(c)[:pid]).to eq(@pids[c]), "#{c} was restarted" }
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.each { |c| expect(listed[c]).to include('agent_noop' => true), listed[c].inspect }
    end

    it 'reports the next runs as would-change, the changing files pending, and changes nothing' do
      runs = wait_for(timeout: runinterval + 90, interval: 5) do
        seen = last_runs
        clones.all? { |c| seen[c]['status'] == 'would-change' && seen[c]['last_run'] >= @since } && seen
      end
      expect(runs).to be_truthy, "no noop run reported after #{runinterval + 90}s: #{last_runs.inspect}
#{diagnostics}"
      clones.each do |c|
        # The two changing files would change; the static ones are in sync.
        expect(runs[c]['would_change']).to eq(2), runs[c].inspect
        expect(upper_file(c, 'changing_1', workload_dir)).to eq(@changing[c])
      end
      table = on_sandbox!(SandboxHarness::HELPER, 'report', '--format', 'table', timeout: 60).stdout
      expect(table).to match(%r{^clone1\s+running\s+would-change \(2\)}), table
    end
  end

  context 'put back into the default run mode' do
    before(:all) do
      @restore = SandboxHarness.apply(class_manifest(num_clones: clones.size), timeout: apply_timeout)
      restart_clones(clones)
      on_sandbox('rm', '-rf', source, timeout: 60)
    end

    it 'applies with changes and no error (exit 2)' do
      expect(@restore.exitstatus).to eq(2), @restore.to_s
      expect(@restore.output).not_to match(%r{^(Error|Warning):}), @restore.to_s
    end

    it 'has the clones in daemon mode against the server, without the bind' do
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.each do |clone|
        expect(listed[clone]).to include('state' => 'running', 'run_mode' => 'daemon', 'apply_source' => nil,
                                         'server' => SandboxHarness::SERVER, 'agent_noop' => false),
                                 "#{clone}: #{listed[clone].inspect}"
        settings = on_sandbox!('cat', "/etc/systemd/nspawn/#{clone}.nspawn", timeout: 30).output
        expect(settings).not_to include(':/srv/clone-army-apply'), "#{clone}.nspawn still binds the apply source"
      end
    end

    it 'makes no change when applied again (exit 0)' do
      again = SandboxHarness.apply(class_manifest(num_clones: clones.size), timeout: apply_timeout)
      expect(again.exitstatus).to eq(0), again.to_s
    end
  end
end

# frozen_string_literal: true

require 'puppet'
require_relative 'spec_helper_acceptance'

# Plan clone_army::load_test's steps, run on a sandbox host as Bolt runs them
# (Bolt itself cannot be installed here): the class applied with what the
# plan adds to it (`record => true`), the report task's script fed JSON on
# stdin with PT__installdir laid out as Bolt lays it out, polled until every
# clone has checked in by the plan's own clone_army::checkin_pending, a
# short recording, the recorded run's summary and page through the report
# task with the plan's parameters, and the page fetched back to this machine
# as download_file would. The ramp task's refusals (a file outside the
# recorder's directory, one already there) run for real too.
RSpec.describe 'plan clone_army::load_test, its steps as Bolt runs them' do
  clones = 2
  duration = 20
  timeline = '/var/log/puppet-clone-army/timeline.jsonl'
  run = "load_test-#{Time.now.utc.strftime('%Y%m%dT%H%M%SZ')}"
  # Where Bolt copies a task and the files its metadata lists.
  installdir = '/root/load-test-plan-installdir'
  checkin_timeout = Integer(ENV.fetch('CHECKIN_TIMEOUT', 420))

  # The plan's class declaration: its parameters and record => true.
  manifest = "class { 'clone_army': server => '#{SandboxHarness::SERVER}', num_clones => #{clones}, " \
             "runinterval => #{SandboxHarness::RUNINTERVAL}, record => true, record_every => 5 }"

  # Runs task `name` with `params` as Bolt does: its script from the
  # installdir, the parameters as JSON on stdin with Bolt's own `_task`;
  # [its answer parsed, the result].
  def bolt_task(installdir, name, params)
    script = "#{installdir}/clone_army/tasks/#{name}.rb"
    stdin = JSON.generate(params.merge('_task' => "clone_army::#{name}"))
    result = on_sandbox('env', "PT__installdir=#{installdir}", 'sh', '-c', 'printf %s "$1" | "$2"', 'sh', stdin, script,
                        timeout: 300)
    [JSON.parse(result.stdout), result]
  rescue JSON::ParserError
    raise "task #{name} printed no JSON: #{result}"
  end

  # What the plan waits for, by the plan's own function: the report task's
  # result as `$results.to_data` gives it to clone_army::checkin_pending,
  # evaluated by Puppet with this module on its modulepath. Empty: checked in.
  def checkin_pending(answer, result, clones)
    data = [{ 'target' => SandboxHarness::NAME, 'action' => 'task', 'object' => 'clone_army::report',
              'status' => result.exitstatus.zero? ? 'success' : 'failure', 'value' => answer }]
    Puppet.initialize_settings unless Puppet.settings.global_defaults_initialized?
    Dir.mktmpdir('load-test-modules') do |modules|
      File.symlink(SandboxHarness::MODULE_DIR, File.join(modules, 'clone_army'))
      Puppet::Pal.in_tmp_environment('load_test', modulepath: [modules], facts: {}) do |pal|
        pal.with_script_compiler { |compiler| compiler.call_function('clone_army::checkin_pending', data, clones) }
      end
    end
  end

  before(:all) do
    on_sandbox!('rm', '-f', timeline, timeout: 30)
    applied = SandboxHarness.apply(manifest, timeout: Integer(ENV.fetch('FIRST_APPLY_TIMEOUT', 1200)))
    raise "the plan's apply failed: #{applied}" unless [0, 2].include?(applied.exitstatus)

    # $PT__installdir as Bolt lays it out: each task's script and only the
    # files its metadata lists, under clone_army/.
    lay_out = <<~SH
      set -e
      rm -rf #{installdir}
      cd #{SandboxHarness::MODULE_BOUND}
      for task in report ramp fleet; do
        mkdir -p #{installdir}/clone_army/tasks
        cp tasks/$task.rb #{installdir}/clone_army/tasks/
        for file in $(ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["files"]' tasks/$task.json); do
          mkdir -p #{installdir}/$(dirname "$file")
          cp "${file#clone_army/}" #{installdir}/$file
        done
      done
    SH
    on_sandbox!('sh', '-c', lay_out, timeout: 120)
  end

  after(:all) do
    on_sandbox('rm', '-rf', installdir, timeout: 60)
    SandboxHarness.apply(class_manifest(num_clones: clones), timeout: 600)
  end

  it 'sees every clone check in through the report task, then records and summarises the run' do
    pending = nil
    ok = wait_for(timeout: checkin_timeout, interval: 10) do
      pending = checkin_pending(*bolt_task(installdir, 'report', {}), clones)
      pending.empty?
    end
    expect(ok).to be_truthy, "#{pending.inspect}\n#{diagnostics}"

    sleep duration
    summary, result = bolt_task(installdir, 'report', 'from' => timeline, 'format' => 'json')
    expect(result.exitstatus).to eq(0), result.to_s
    expect(summary['ok']).to be(true), result.to_s
    expect(summary['result']).to be_a(Hash)
  end

  it 'draws the page beside the timeline and fetches it back' do
    answer, result = bolt_task(installdir, 'report', 'from' => timeline, 'format' => 'html', 'output' => "#{run}.html")
    expect(result.exitstatus).to eq(0), result.to_s
    page = answer.dig('result', 'page')
    expect(page).to eq("/var/log/puppet-clone-army/#{run}.html")
    # download_file: the file copied to <destination>/<target>/ on the Bolt host.
    landed = File.join(SandboxHarness.work_dir, 'downloads', run, 'page', SandboxHarness::NAME, File.basename(page))
    FileUtils.mkdir_p(File.dirname(landed))
    File.write(landed, on_sandbox!('cat', page, timeout: 60).stdout)
    expect(File.size(landed)).to eq(answer.dig('result', 'bytes'))
    expect(File.read(landed)).to match(%r{<figure class="chart" id="clones" data-points="[1-9]})
  end

  it 'has the ramp task refuse files outside the recorder\'s directory or there already, before anything runs' do
    outside, result = bolt_task(installdir, 'ramp', 'step' => 1, 'max_p95' => 30, 'baseline' => '/etc/cron.d/x.json')
    expect(result.exitstatus).to eq(1), result.to_s
    expect(outside['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => 'baseline' })
    there, result = bolt_task(installdir, 'ramp', 'step' => 1, 'max_p95' => 30, 'timeline' => File.basename(timeline))
    expect(result.exitstatus).to eq(1), result.to_s
    expect(there['_error']['msg']).to match(%r{is there already})
    expect(on_sandbox('test', '-e', '/etc/cron.d/x.json', timeout: 30).exitstatus).not_to eq(0)
    expect(clone_list.map { |clone| clone['state'] }).to all(eq('running'))
  end
end

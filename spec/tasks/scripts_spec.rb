# frozen_string_literal: true

require 'spec_helper'
require 'open3'
require 'fileutils'

# The task files as Bolt runs them: an executable fed JSON on stdin, with a
# stand-in helper that records its argv, once from the module checkout and
# once from a copy laid out as Bolt lays out $PT__installdir.
describe 'the Bolt tasks' do
  root = File.expand_path('../..', __dir__)
  tasks = ['report', 'exec', 'fleet', 'ramp']

  around(:each) do |example|
    Dir.mktmpdir('clone-army-task-spec') do |dir|
      @dir = dir
      example.run
    end
  end

  # A stand-in for clone-army: appends its argv (as JSON) to argv.log and
  # answers like the helper (`ramp longest`: no limit); FAKE_FAIL=1 makes it
  # fail.
  let(:helper) do
    path = File.join(@dir, 'clone-army')
    File.write(path, <<~RUBY)
      #!/usr/bin/env ruby
      require 'json'
      File.open(File.join(__dir__, 'argv.log'), 'a') { |log| log.puts(JSON.generate(ARGV)) }
      if ENV['FAKE_FAIL']
        puts JSON.generate('protocol' => 2, 'ok' => false, 'error' => { 'kind' => 'not-found', 'message' => 'no clone "clone9"', 'causes' => [] })
        exit 1
      end
      clones = [{ 'name' => 'clone1', 'state' => 'running' }, { 'name' => 'clone2', 'state' => 'stopped' }]
      result = ARGV.take(2) == ['ramp', 'longest'] ? { 'seconds' => nil, 'steps' => nil } : { 'clones' => clones, 'argv' => ARGV }
      puts JSON.generate('protocol' => 2, 'ok' => true, 'result' => result)
    RUBY
    File.chmod(0o755, path)
    path
  end

  def argv_log
    File.readlines(File.join(@dir, 'argv.log')).map { |line| JSON.parse(line) }
  end

  # The stand-in reaches the task through its test hook, never a parameter.
  def run_script(script, params, env = {})
    env = { 'CLONE_ARMY_TASK_HELPER' => helper }.merge(env)
    stdout, stderr, status = Open3.capture3(env, script, stdin_data: JSON.generate(params))
    [stdout, stderr, status.exitstatus]
  end

  tasks.each do |task|
    describe "tasks/#{task}" do
      let(:metadata) { JSON.parse(File.read(File.join(root, 'tasks', "#{task}.json"))) }

      it 'is executable' do
        expect(File.executable?(File.join(root, 'tasks', "#{task}.rb"))).to be true
      end

      it 'has metadata with stdin input, its shared file, and a description and valid Puppet type per parameter' do
        expect(metadata['input_method']).to eq('stdin')
        shared = ['task.rb', 'task_io.rb', 'answer.rb', 'call_limits.rb', 'runner.rb', 'record_dir.rb', 'schema.rb', 'schema.json',
                  'service_address.rb', 'ramp_args.rb']
        expect(metadata['files']).to eq(shared.map { |f| "clone_army/lib/puppet_x/clone_army/#{f}" })
        metadata['files'].each { |file| expect(File.file?(File.join(root, file.delete_prefix('clone_army/')))).to be true }
        metadata['parameters'].each do |name, parameter|
          expect(parameter['description']).to be_a(String), "#{name} has no description"
          expect { Puppet::Pops::Types::TypeParser.singleton.parse(parameter['type']) }.not_to raise_error
        end
      end
    end
  end

  def parameter_type(task, name)
    metadata = JSON.parse(File.read(File.expand_path("../../tasks/#{task}.json", __dir__)))
    Puppet::Pops::Types::TypeParser.singleton.parse(metadata['parameters'][name]['type'])
  end

  # Checks params against the metadata's types, as Bolt does.
  def expect_valid(task, params)
    metadata = JSON.parse(File.read(File.expand_path("../../tasks/#{task}.json", __dir__)))
    metadata['parameters'].each do |name, parameter|
      type = Puppet::Pops::Types::TypeParser.singleton.parse(parameter['type'])
      expect(type.instance?(params[name])).to be(true), "#{name} = #{params[name].inspect} is not a #{parameter['type']}"
    end
  end

  it 'exec metadata takes what the task takes and refuses what it refuses' do
    expect_valid('exec', 'command' => ['puppet', 'agent', '-t'], 'clones' => ['clone1'], 'concurrency' => 10, 'timeout' => 60)
    type = parameter_type('exec', 'clones')
    expect(type.instance?(['--all'])).to be false
    expect(type.instance?([])).to be false
  end

  it 'report and fleet metadata take their parameters' do
    expect_valid('report', 'interval' => 1800, 'server' => 'https://puppet.example.com:8140', 'format' => 'prometheus',
                           'ca_cert' => '/etc/puppetlabs/puppet/ssl/certs/ca.pem', 'puppetdb' => 'https://puppetdb:8081',
                           'client_cert' => '/etc/puppetlabs/puppet/ssl/certs/l.pem',
                           'client_key' => '/etc/puppetlabs/puppet/ssl/private_keys/l.pem')
    expect(parameter_type('report', 'puppetdb').instance?('http://puppetdb:8080')).to be false
    # Hosts and host:port too, as the class takes them.
    expect_valid('report', 'server' => 'puppet.example.com', 'puppetdb' => 'puppetdb.example.com:8081')
    expect_valid('fleet', 'action' => 'stop')
  end

  # Bolt's check of from and output takes the names the task takes
  # (PuppetX::CloneArmy::RecordDir::NAME), alone or at the end of an absolute
  # path (which the task then holds to the recorder's directory).
  it 'report metadata takes for from and output the names the task takes, and no other' do
    require 'puppet_x/clone_army/record_dir'
    names = ['timeline.jsonl', 'lab@1.jsonl', 'a', 'run-2.html', '.x', '..', '.', 'a b', '-', 'x.html', '.html', "a\nb"]
    from = parameter_type('report', 'from')
    output = parameter_type('report', 'output')
    names.each do |name|
      takes = name.match?(PuppetX::CloneArmy::RecordDir::NAME)
      expect(from.instance?(name)).to be(takes), name.inspect
      expect(from.instance?("/var/log/puppet-clone-army/#{name}")).to be(takes), name.inspect
      expect(output.instance?(name)).to be(takes && name.end_with?('.html')), name.inspect
    end
    ['a/b', 'relative/timeline.jsonl', '/var/log/../timeline.jsonl/', ''].each do |bad|
      expect(from.instance?(bad)).to be(false), bad.inspect
    end
    ['/etc/ld.so.preload', 'timeline.htm'].each { |bad| expect(output.instance?(bad)).to be(false), bad.inspect }
  end

  context 'run from the module checkout' do
    it 'exec passes the command to the helper word for word, never through a shell' do
      command = ['sh', '-c', 'touch "$0"; echo pwned', File.join(@dir, 'pwned'), '$(touch /tmp/x)', ';', '|']
      stdout, _, status = run_script(File.join(root, 'tasks/exec.rb'),
                                     'command' => command, 'clones' => ['clone1'], 'concurrency' => 2,
                                     '_task' => 'clone_army::exec')
      expect(status).to eq(0)
      expect(argv_log).to eq([['exec', '--clone', 'clone1', '--concurrency', '2', '--format', 'json', '--', *command]])
      expect(JSON.parse(stdout)['result']['argv']).to eq(argv_log.first)
      expect(File.exist?(File.join(@dir, 'pwned'))).to be false
    end

    it 'fleet start lists the clones and starts every one' do
      stdout, _, status = run_script(File.join(root, 'tasks/fleet.rb'), 'action' => 'start')
      expect(status).to eq(0)
      expect(argv_log).to eq([['clone', 'list', '--format', 'json'], ['clone', 'start', '--', 'clone1', 'clone2']])
      expect(JSON.parse(stdout)['ok']).to be true
    end

    it 'report fails with the helper\'s exit status and Bolt\'s _error' do
      stdout, _, status = run_script(File.join(root, 'tasks/report.rb'), { 'interval' => 60 }, 'FAKE_FAIL' => '1')
      expect(status).to eq(1)
      expect(argv_log).to eq([['report', '--interval', '60', '--format', 'json']])
      expect(JSON.parse(stdout)['_error']).to include('kind' => 'clone_army/not-found', 'msg' => 'no clone "clone9"')
    end

    it 'ramp runs the helper with its files in the recorder\'s directory and answers both paths' do
      Dir.mkdir(File.join(@dir, 'log'), 0o755)
      File.write(File.join(@dir, 'record_dir'), "#{@dir}/log\n")
      File.chmod(0o644, File.join(@dir, 'record_dir'))
      File.chmod(0o755, @dir)
      stdout, _, status = run_script(File.join(root, 'tasks/ramp.rb'), { 'step' => 5, 'max_p95' => 30, 'baseline' => 'stock.json' },
                                     'CLONE_ARMY_TASK_RECORD_DIR_FILE' => File.join(@dir, 'record_dir'))
      expect(status).to eq(0)
      # Its time limit first, asked with the same arguments.
      args = ['--output', "#{@dir}/log/stock.json", '--timeline', "#{@dir}/log/stock.jsonl",
              '--interval', '1800', '--step', '5', '--max-p95', '30']
      expect(argv_log).to eq([['ramp', 'longest', *args], ['ramp', 'run', *args]])
      expect(JSON.parse(stdout)['result']).to include('timeline' => "#{@dir}/log/stock.jsonl")
    end

    it 'runs only the installed helper: a helper parameter is refused before anything runs' do
      other = File.join(@dir, 'other-binary')
      FileUtils.cp(helper, other)
      tasks.each do |task|
        stdout, _, status = run_script(File.join(root, "tasks/#{task}.rb"), 'helper' => other, 'action' => 'status')
        expect(status).to eq(1)
        error = JSON.parse(stdout)['_error']
        expect(error['details']).to eq('field' => 'helper')
        expect(error['msg']).to include('the tasks run only the installed helper, /usr/local/sbin/clone-army')
      end
      expect(File.exist?(File.join(@dir, 'argv.log'))).to be false
    end

    it 'a bad parameter fails before the helper runs' do
      stdout, _, status = run_script(File.join(root, 'tasks/exec.rb'), 'command' => 'puppet agent -t')
      expect(status).to eq(1)
      expect(File.exist?(File.join(@dir, 'argv.log'))).to be false
      expect(JSON.parse(stdout)['_error']['kind']).to eq('clone_army/invalid-parameter')
    end
  end

  context 'run from a copy laid out as Bolt lays out $PT__installdir' do
    it 'finds the shared code through PT__installdir' do
      installdir = File.join(@dir, 'installdir')
      FileUtils.mkdir_p(File.join(installdir, 'clone_army/tasks'))
      FileUtils.mkdir_p(File.join(installdir, 'clone_army/lib/puppet_x/clone_army'))
      FileUtils.cp(File.join(root, 'tasks/fleet.rb'), File.join(installdir, 'clone_army/tasks/fleet.rb'))
      # Only what the metadata's "files" lists, as Bolt copies it.
      JSON.parse(File.read(File.join(root, 'tasks/fleet.json')))['files'].each do |file|
        FileUtils.cp(File.join(root, file.delete_prefix('clone_army/')), File.join(installdir, file))
      end
      # Bolt may run the task from elsewhere; only PT__installdir says where the files are.
      script = File.join(@dir, 'fleet.rb')
      FileUtils.cp(File.join(root, 'tasks/fleet.rb'), script)
      stdout, stderr, status = run_script(script, { 'action' => 'status' }, 'PT__installdir' => installdir)
      expect(stderr).to eq('')
      expect(status).to eq(0)
      expect(JSON.parse(stdout)['result']['clones'].size).to eq(2)
    end
  end
end

# frozen_string_literal: true

require 'spec_helper'
require 'stringio'
require 'open3'
require 'fileutils'
require 'puppet_x/clone_army/clean_certs'

# clone_army::clean_certs: the exact commands it runs on the Puppet Server and
# how it reads their output per certname; then the script as Bolt runs it,
# against stand-in puppetserver and puppet that record their argv. The task
# run for real against Debian's Puppet Server is in
# spec/acceptance/real_ca_spec.rb.
describe PuppetX::CloneArmy::CleanCerts do
  root = File.expand_path('../..', __dir__)
  let(:module_root) { root }
  let(:puppetserver) { '/opt/puppetlabs/bin/puppetserver' }
  let(:puppet) { '/opt/puppetlabs/bin/puppet' }
  let(:cleaned) do
    "Certificate for a.example.com has been revoked\nCleaned files related to a.example.com\n" \
      "Certificate for b.example.com has been revoked\nCleaned files related to b.example.com\n"
  end

  def run_task(params)
    output = StringIO.new
    status = described_class.main(StringIO.new(JSON.generate(params)), output)
    [JSON.parse(output.string), status]
  end

  def tools(server: puppetserver, agent: puppet, puppetdb: false)
    allow(described_class).to receive(:tool).with('puppetserver', described_class::PUPPETSERVER).and_return(server)
    allow(described_class).to receive(:tool).with('puppet', described_class::PUPPET).and_return(agent)
    described_class::PUPPETDB_CONF.each { |path| allow(File).to receive(:file?).with(path).and_return(puppetdb) }
  end

  def expect_run(argv, output, exitstatus = 0)
    expect(described_class).to receive(:run).with(argv).ordered.and_return([output, exitstatus])
  end

  it 'cleans every certname in one `puppetserver ca clean` and skips PuppetDB where it is not configured' do
    tools
    expect_run([puppetserver, 'ca', 'clean', '--certname', 'a.example.com', '--certname', 'b.example.com'], cleaned)
    result, status = run_task('certnames' => ['a.example.com', 'b.example.com', 'a.example.com'])
    expect(status).to eq(0)
    expect(result['certnames']).to eq('a.example.com' => { 'ca' => 'cleaned', 'puppetdb' => 'skipped' },
                                      'b.example.com' => { 'ca' => 'cleaned', 'puppetdb' => 'skipped' })
    expect(result['commands']).to eq(['puppetserver ca clean --certname a.example.com --certname b.example.com'])
    expect(result['changed']).to be true
  end

  it 'deactivates the nodes with `puppet node deactivate` where the server has puppetdb.conf' do
    tools(server: '/usr/bin/puppetserver', agent: '/usr/bin/puppet', puppetdb: true)
    expect_run(['/usr/bin/puppetserver', 'ca', 'clean', '--certname', 'a.example.com'],
               "Certificate for a.example.com has been revoked\nCleaned files related to a.example.com\n")
    expect_run(['/usr/bin/puppet', 'node', 'deactivate', 'a.example.com'],
               "Submitted 'deactivate node' for a.example.com with UUID 0fb445ff-d660-41eb-b6d2-eca40447d4bf\n")
    result, status = run_task('certnames' => ['a.example.com'])
    expect(status).to eq(0)
    expect(result['certnames']).to eq('a.example.com' => { 'ca' => 'cleaned', 'puppetdb' => 'deactivated' })
  end

  it 'takes deactivate as given, whatever the server has' do
    tools(puppetdb: true)
    expect_run([puppetserver, 'ca', 'clean', '--certname', 'a.example.com'], "Cleaned files related to a.example.com\n")
    expect(run_task('certnames' => ['a.example.com'], 'deactivate' => false).first['certnames'])
      .to eq('a.example.com' => { 'ca' => 'cleaned', 'puppetdb' => 'skipped' })
    tools(puppetdb: false)
    expect_run([puppetserver, 'ca', 'clean', '--certname', 'a.example.com'], "Cleaned files related to a.example.com\n")
    expect_run([puppet, 'node', 'deactivate', 'a.example.com'], "Submitted 'deactivate node' for a.example.com with UUID x\n")
    expect(run_task('certnames' => ['a.example.com'], 'deactivate' => true).last).to eq(0)
  end

  it 'reports a certname the CA does not know as absent (what was wanted), and one it failed on as failed' do
    tools
    output = "Cleaned files related to a.example.com\nError:\n    Could not find files to clean for b.example.com\n" \
             "Error:\n    When attempting to clean certificate 'c.example.com', received:\n      code: 500\n"
    expect_run([puppetserver, 'ca', 'clean', '--certname', 'a.example.com', '--certname', 'b.example.com',
                '--certname', 'c.example.com'], output, 1)
    result, status = run_task('certnames' => ['a.example.com', 'b.example.com', 'c.example.com'])
    expect(status).to eq(1)
    expect(result['certnames'].transform_values { |o| o['ca'] })
      .to eq('a.example.com' => 'cleaned', 'b.example.com' => 'absent', 'c.example.com' => 'failed')
    expect(result['_error']).to include('kind' => 'clone_army/clean-failed')
    expect(result['_error']['details']['failed']).to eq(['c.example.com'])
    expect(result['_error']['details']['puppetserver_ca']).to eq('exitstatus' => 1, 'output' => output)
  end

  it 'does not take one certname\'s line for another\'s' do
    expect(described_class.ca_outcome("Cleaned files related to a.example.com.evil\n", 'a.example.com')).to eq('failed')
    expect(described_class.ca_outcome("Cleaned files related to xa.example.com\n", 'a.example.com')).to eq('failed')
    expect(described_class.puppetdb_outcome("Submitted 'deactivate node' for a.example.com with UUID x\n", 1, 'a.example.com'))
      .to eq('failed')
  end

  it 'fails a node PuppetDB did not deactivate' do
    tools(puppetdb: true)
    expect_run([puppetserver, 'ca', 'clean', '--certname', 'a.example.com'], "Cleaned files related to a.example.com\n")
    expect_run([puppet, 'node', 'deactivate', 'a.example.com'], "Error: Could not find terminus puppetdb\n", 1)
    result, status = run_task('certnames' => ['a.example.com'])
    expect(status).to eq(1)
    expect(result['certnames']['a.example.com']).to eq('ca' => 'cleaned', 'puppetdb' => 'failed')
  end

  [
    ['certnames', nil], ['certnames', []], ['certnames', 'a.example.com'], ['certnames', ['--all']],
    ['certnames', ['a b']], ['certnames', ['a.example.com;rm -rf /']], ['certnames', ['-a']], ['certnames', ['a..b']],
    ['certnames', ['a' * 64]], ['certnames', [([('a' * 63)] * 4).join('.')]], ['certnames', [1]],
    ['deactivate', 'yes']
  ].each do |key, bad|
    it "refuses #{key} #{bad.inspect.slice(0, 40)} before running anything" do
      expect(described_class).not_to receive(:run)
      params = { 'certnames' => ['a.example.com'] }.merge(key => bad)
      params.delete(key) if bad.nil?
      result, status = run_task(params)
      expect(status).to eq(1)
      expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => key })
    end
  end

  it 'says where it looked when puppetserver is not installed' do
    described_class::PUPPETSERVER.each { |path| allow(File).to receive(:file?).with(path).and_return(false) }
    expect(described_class).not_to receive(:run)
    result, status = run_task('certnames' => ['a.example.com'], 'deactivate' => false)
    expect(status).to eq(1)
    expect(result['_error']['kind']).to eq('clone_army/tool-missing')
    expect(result['_error']['msg']).to include('/opt/puppetlabs/bin/puppetserver, /usr/bin/puppetserver')
  end

  describe 'its metadata' do
    let(:metadata) { JSON.parse(File.read(File.join(root, 'tasks/clean_certs.json'))) }

    def type(metadata, name)
      Puppet::Pops::Types::TypeParser.singleton.parse(metadata['parameters'][name]['type'])
    end

    it 'takes JSON on stdin, lists its shared files, and the script is executable' do
      expect(metadata['input_method']).to eq('stdin')
      shared = ['clean_certs.rb', 'task_io.rb', 'schema.rb', 'schema.json']
      expect(metadata['files']).to eq(shared.map { |f| "clone_army/lib/puppet_x/clone_army/#{f}" })
      expect(File.executable?(File.join(root, 'tasks/clean_certs.rb'))).to be true
    end

    it 'has certnames follow the helper\'s hostname rule (the Clone_army::Hostname alias)' do
      alias_body = File.read(File.join(root, 'types/hostname.pp'))[%r{^type Clone_army::Hostname = (.*)$}, 1]
      expect(metadata['parameters']['certnames']['type']).to eq("Array[#{alias_body}, 1]")
      certnames = type(metadata, 'certnames')
      PuppetX::CloneArmy::Schema.fetch('names', 'hostname', 'valid').each { |n| expect(certnames.instance?([n])).to be true }
      PuppetX::CloneArmy::Schema.fetch('names', 'hostname', 'invalid').each { |n| expect(certnames.instance?([n])).to be false }
      expect(certnames.instance?([])).to be false
      expect(type(metadata, 'deactivate').instance?(nil)).to be true
    end
  end

  describe 'tasks/clean_certs.rb as Bolt runs it' do
    around(:each) do |example|
      Dir.mktmpdir('clone-army-clean-certs-spec') do |dir|
        @dir = dir
        example.run
      end
    end

    # Stand-ins at Debian's paths under the test root: they record their argv
    # and answer as puppetserver ca clean and puppet node deactivate do.
    def stand_in(path, answer)
      file = File.join(@dir, path)
      FileUtils.mkdir_p(File.dirname(file))
      File.write(file, <<~RUBY)
        #!/usr/bin/env ruby
        require 'json'
        File.open(File.join(#{@dir.inspect}, 'argv.log'), 'a') { |log| log.puts(JSON.generate([__FILE__.delete_prefix(#{"#{@dir}/".inspect}), *ARGV])) }
        ARGV.each { |arg| puts format(#{answer.inspect}, arg) unless arg.start_with?('-') || %w[ca clean node deactivate].include?(arg) }
      RUBY
      File.chmod(0o755, file)
    end

    def run_script(params, installdir: nil)
      env = { 'CLONE_ARMY_TASK_ROOT' => @dir }
      env['PT__installdir'] = installdir if installdir
      script = File.join(module_root, 'tasks/clean_certs.rb')
      if installdir
        FileUtils.mkdir_p(File.join(installdir, 'clone_army/lib/puppet_x/clone_army'))
        JSON.parse(File.read(File.join(module_root, 'tasks/clean_certs.json')))['files'].each do |file|
          FileUtils.cp(File.join(module_root, file.delete_prefix('clone_army/')), File.join(installdir, file))
        end
        script = File.join(@dir, 'clean_certs.rb')
        FileUtils.cp(File.join(module_root, 'tasks/clean_certs.rb'), script)
      end
      stdout, stderr, status = Open3.capture3(env, script, stdin_data: JSON.generate(params))
      [JSON.parse(stdout), stderr, status.exitstatus]
    end

    def argv_log
      File.readlines(File.join(@dir, 'argv.log')).map { |line| JSON.parse(line) }
    end

    it 'runs Debian\'s puppetserver and puppet with the certnames as argv, never through a shell' do
      stand_in('usr/bin/puppetserver', 'Cleaned files related to %s')
      stand_in('usr/bin/puppet', "Submitted 'deactivate node' for %s with UUID 1")
      FileUtils.mkdir_p(File.join(@dir, 'etc/puppet'))
      File.write(File.join(@dir, 'etc/puppet/puppetdb.conf'), "[main]\n")
      result, _, status = run_script({ 'certnames' => ['c1.example.com', 'c2.example.com'], '_task' => 'clone_army::clean_certs' })
      expect(status).to eq(0)
      expect(argv_log).to eq([['usr/bin/puppetserver', 'ca', 'clean', '--certname', 'c1.example.com', '--certname', 'c2.example.com'],
                              ['usr/bin/puppet', 'node', 'deactivate', 'c1.example.com', 'c2.example.com']])
      expect(result['certnames'].values.uniq).to eq([{ 'ca' => 'cleaned', 'puppetdb' => 'deactivated' }])
    end

    it 'prefers the all-in-one packages\' puppetserver, and finds its code through PT__installdir' do
      stand_in('usr/bin/puppetserver', 'Cleaned files related to %s')
      stand_in('opt/puppetlabs/bin/puppetserver', 'Cleaned files related to %s')
      stand_in('opt/puppetlabs/bin/puppet', 'unused %s')
      result, stderr, status = run_script({ 'certnames' => ['c1.example.com'] }, installdir: File.join(@dir, 'installdir'))
      expect(stderr).to eq('')
      expect(status).to eq(0)
      expect(argv_log).to eq([['opt/puppetlabs/bin/puppetserver', 'ca', 'clean', '--certname', 'c1.example.com']])
      expect(result['certnames']).to eq('c1.example.com' => { 'ca' => 'cleaned', 'puppetdb' => 'skipped' })
    end
  end
end

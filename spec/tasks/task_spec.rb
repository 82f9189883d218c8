# frozen_string_literal: true

require 'spec_helper'
require 'stringio'
require 'puppet_x/clone_army/task'

describe PuppetX::CloneArmy::Task do
  let(:helper) { '/usr/local/sbin/clone-army' }
  let(:ok_list) do
    '{"protocol":2,"ok":true,"result":{"clones":[{"name":"clone1","state":"running"},{"name":"clone2","state":"stopped"}]}}'
  end
  let(:ok_empty) { '{"protocol":2,"ok":true,"result":{"clones":[]}}' }
  let(:failed) do
    '{"protocol":2,"ok":false,"error":{"kind":"systemd","message":"cannot reach systemd","field":null,"causes":["no bus"]}}'
  end

  # Runs task `name` with `params` as its stdin; [parsed stdout, exit status].
  def run_task(name, params)
    output = StringIO.new
    status = described_class.main(name, StringIO.new(JSON.generate(params)), output)
    text = output.string
    [begin
      JSON.parse(text)
    rescue JSON::ParserError
      text
    end, status]
  end

  def expect_run(argv, stdout, exitstatus = 0)
    expect(described_class).to receive(:run).with(argv).ordered.and_return([stdout, exitstatus])
  end

  describe 'clone_army::report' do
    # The recorder's directory, named as class clone_army names it, in a file
    # the task finds through its test hook.
    around(:each) do |example|
      Dir.mktmpdir('clone-army-record-dir') do |tmp|
        @record_dir = File.join(tmp, 'log')
        Dir.mkdir(@record_dir)
        File.chmod(0o755, @record_dir)
        @record_dir_file = File.join(tmp, 'etc', 'record_dir')
        Dir.mkdir(File.dirname(@record_dir_file))
        File.chmod(0o755, File.dirname(@record_dir_file))
        File.write(@record_dir_file, "# Managed by Puppet (class clone_army).\n#{@record_dir}\n")
        File.chmod(0o644, @record_dir_file)
        ENV[PuppetX::CloneArmy::RecordDir::TEST_ENV] = @record_dir_file
        example.run
      ensure
        ENV.delete(PuppetX::CloneArmy::RecordDir::TEST_ENV)
      end
    end

    it 'runs `clone-army report --format json` by default' do
      expect_run([helper, 'report', '--format', 'json'], '{"protocol":2,"ok":true,"result":{"clones":[]}}')
      expect(run_task(:report, {})).to eq([{ 'protocol' => 2, 'ok' => true, 'result' => { 'clones' => [] } }, 0])
    end

    it 'passes interval, server, ca_cert and format as flags' do
      expect_run([helper, 'report', '--interval', '1800', '--server', 'https://puppet.example.com:8140',
                  '--ca-cert', '/etc/puppetlabs/puppet/ssl/certs/ca.pem', '--format', 'json'], '{"protocol":2,"ok":true,"result":{}}')
      _, status = run_task(:report, 'interval' => 1800, 'server' => 'https://puppet.example.com:8140',
                                    'ca_cert' => '/etc/puppetlabs/puppet/ssl/certs/ca.pem', 'format' => 'json')
      expect(status).to eq(0)
    end

    it 'passes puppetdb and a client certificate with its key as flags' do
      expect_run([helper, 'report', '--puppetdb', 'https://puppetdb.example.com:8081',
                  '--client-cert', '/etc/puppetlabs/puppet/ssl/certs/load1.pem',
                  '--client-key', '/etc/puppetlabs/puppet/ssl/private_keys/load1.pem', '--format', 'json'],
                 '{"protocol":2,"ok":true,"result":{}}')
      _, status = run_task(:report, 'puppetdb' => 'https://puppetdb.example.com:8081',
                                    'client_cert' => '/etc/puppetlabs/puppet/ssl/certs/load1.pem',
                                    'client_key' => '/etc/puppetlabs/puppet/ssl/private_keys/load1.pem')
      expect(status).to eq(0)
    end

    it 'refuses a client certificate without its key, and plain http, before anything runs' do
      expect(described_class).not_to receive(:run)
      expect { described_class.report_args('client_cert' => '/x/cert.pem') }
        .to raise_error(PuppetX::CloneArmy::Task::ParameterError, %r{client_cert and client_key go together})
      expect { described_class.report_args('puppetdb' => 'http://puppetdb:8080') }
        .to raise_error(PuppetX::CloneArmy::Task::ParameterError, %r{puppetdb must be a host name, host:port or an https:// URL})
    end

    # As class clone_army takes `server` and `record_puppetdb`: the helper
    # makes https://host:8140 (8081 for PuppetDB) of a bare host.
    {
      'a host' => ['puppet.example.com', 'puppetdb.example.com'],
      'a host:port' => ['puppet.example.com:8141', 'puppetdb.example.com:8081'],
      'an https URL' => ['https://puppet.example.com:8140', 'https://puppetdb.example.com:8081/'],
    }.each do |form, (server, puppetdb)|
      it "hands server and puppetdb given as #{form} to the helper as they are" do
        expect(described_class.report_args('server' => server, 'puppetdb' => puppetdb))
          .to eq(['report', '--server', server, '--puppetdb', puppetdb, '--format', 'json'])
      end
    end

    [
      'http://puppet.example.com:8140', 'https://puppet.example.com:8140/status/v1/services', 'ftp://puppet',
      'puppet example', '-puppet', 'puppet:', 'https://', '', 'puppet.example.com;reboot', "puppet\nx", 8140
    ].each do |bad|
      it "refuses server #{bad.inspect}, naming the parameter and the forms it takes" do
        expect(described_class).not_to receive(:run)
        result, status = run_task(:report, 'server' => bad)
        expect(status).to eq(1)
        expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => 'server' })
        expect(result['_error']['msg']).to include('server must be a host name, host:port or an https:// URL of a host and port',
                                                   'https://puppet.example.com:8140', "got #{bad.inspect}")
      end
    end

    it 'names PuppetDB\'s own port in the forms puppetdb takes' do
      expect { described_class.report_args('puppetdb' => 'puppetdb example') }
        .to raise_error(PuppetX::CloneArmy::Task::ParameterError, %r{puppetdb must be .*https://puppetdb\.example\.com:8081})
    end

    it 'passes table and prometheus text through as it is' do
      text = "# HELP clone_army_runs_total Runs by status\nclone_army_runs_total{status=\"changed\"} 3\n"
      expect_run([helper, 'report', '--format', 'prometheus'], text)
      expect(run_task(:report, 'format' => 'prometheus')).to eq([text, 0])
    end

    it 'adds Bolt\'s _error to a failure, keeping the helper\'s document and exit status' do
      expect_run([helper, 'report', '--format', 'table'], failed, 1)
      result, status = run_task(:report, 'format' => 'table')
      expect(status).to eq(1)
      expect(result['error']['kind']).to eq('systemd')
      expect(result['_error']).to eq('kind' => 'clone_army/systemd', 'msg' => 'cannot reach systemd',
                                     'details' => { 'causes' => ['no bus'], 'exitstatus' => 1 })
    end

    context 'with a recorded run (from)' do
      let(:timeline) { File.join(@record_dir, 'timeline.jsonl') }
      let(:written) do
        '{"protocol":2,"ok":true,"result":{"page":"/var/log/puppet-clone-army/timeline.html","bytes":20480,' \
          '"samples":360,"skipped_lines":0}}'
      end

      # Runs the report task with `params`, expecting a refusal of `field`
      # before anything runs; the refusal's message.
      def refused(params, field, kind: 'clone_army/invalid-parameter')
        expect(described_class).not_to receive(:run)
        result, status = run_task(:report, params)
        expect(status).to eq(1)
        expect(result['_error']).to include('kind' => kind, 'details' => { 'field' => field })
        result['_error']['msg']
      end

      it 'writes the page beside the timeline and answers with its path' do
        expect_run([helper, 'report', '--from', timeline, '--format', 'html', '--output',
                    File.join(@record_dir, 'timeline.html')], written)
        result, status = run_task(:report, 'from' => timeline, 'format' => 'html')
        expect(status).to eq(0)
        expect(result['result']['page']).to eq('/var/log/puppet-clone-army/timeline.html')
      end

      it 'writes the page where output says, in the recorder\'s directory, by name or by path' do
        page = File.join(@record_dir, 'lab.html')
        expect_run([helper, 'report', '--from', File.join(@record_dir, 'lab'), '--format', 'html', '--output', page], written)
        expect(run_task(:report, 'from' => 'lab', 'format' => 'html', 'output' => 'lab.html').last).to eq(0)
        expect_run([helper, 'report', '--from', timeline, '--format', 'html', '--output', page], written)
        expect(run_task(:report, 'from' => timeline, 'format' => 'html', 'output' => page).last).to eq(0)
      end

      it 'replaces a page that is there, a regular file (the helper checks it is a page)' do
        File.write(File.join(@record_dir, 'timeline.html'), "<!doctype html>\n")
        expect_run([helper, 'report', '--from', timeline, '--format', 'html', '--output',
                    File.join(@record_dir, 'timeline.html')], written)
        expect(run_task(:report, 'from' => 'timeline.jsonl', 'format' => 'html').last).to eq(0)
      end

      it 'answers the summary as JSON by default, and as the table when asked' do
        expect_run([helper, 'report', '--from', timeline, '--format', 'json'], '{"protocol":2,"ok":true,"result":{}}')
        expect(run_task(:report, 'from' => timeline)).to eq([{ 'protocol' => 2, 'ok' => true, 'result' => {} }, 0])
        expect_run([helper, 'report', '--from', timeline, '--format', 'table'], "samples  360\n")
        expect(run_task(:report, 'from' => timeline, 'format' => 'table')).to eq(["samples  360\n", 0])
      end

      [
        [{ 'server' => 'https://puppet:8140' }, 'server', %r{asks the live fleet}],
        [{ 'format' => 'prometheus' }, 'format', %r{format must be one of json, table, html}],
        [{ 'format' => 'table', 'output' => 'x.html' }, 'output', %r{give format html}],
      ].each do |extra, field, message|
        it "refuses #{extra.inspect} without running anything" do
          expect(refused({ 'from' => timeline }.merge(extra), field)).to match(message)
        end
      end

      # Root writing the page where a caller allowed only this task says.
      ['/etc/ld.so.preload', '/etc/sudoers.d/x.html', '/tmp/x.html', 'x.txt', '.x.html', 'sub/x.html'].each do |output|
        it "refuses a page output outside the recorder's directory (#{output}) without running anything" do
          message = refused({ 'from' => timeline, 'format' => 'html', 'output' => output }, 'output')
          expect(message).to start_with("output must be a file name ending in .html in the recorder's directory #{@record_dir}")
        end
      end

      it 'refuses a page output that climbs out of the recorder\'s directory without running anything' do
        refused({ 'from' => timeline, 'format' => 'html', 'output' => "#{@record_dir}/../x.html" }, 'output')
        refused({ 'from' => timeline, 'format' => 'html', 'output' => "#{@record_dir}//x.html" }, 'output')
      end

      # /dev/zero passed the helper's size check (its length is 0) and grew
      # the helper until the kernel's OOM killer stopped it.
      ['/dev/zero', '/etc/shadow', '../timeline.jsonl', "#{Dir.tmpdir}/timeline.jsonl"].each do |from|
        it "refuses from #{from} outside the recorder's directory without running anything" do
          expect(refused({ 'from' => from }, 'from')).to start_with("from must be a file name in the recorder's directory")
        end
      end

      it 'refuses a symlinked page output without running anything, and leaves its target alone' do
        target = File.join(@record_dir, 'preload')
        File.write(target, 'kept')
        File.symlink(target, File.join(@record_dir, 'run.html'))
        message = refused({ 'from' => timeline, 'format' => 'html', 'output' => 'run.html' }, 'output')
        expect(message).to match(%r{run\.html is a link: only a regular file})
        expect(File.read(target)).to eq('kept')
      end

      it 'refuses a from that is a symlink or a FIFO without running anything' do
        File.symlink('/dev/zero', File.join(@record_dir, 'zero.jsonl'))
        expect(refused({ 'from' => 'zero.jsonl' }, 'from')).to match(%r{is a link})
        File.mkfifo(File.join(@record_dir, 'fifo.jsonl'))
        expect(refused({ 'from' => 'fifo.jsonl' }, 'from')).to match(%r{is a fifo})
      end

      context 'when the recorder\'s directory is not root\'s to name' do
        it 'refuses when class clone_army has not named it' do
          File.unlink(@record_dir_file)
          message = refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
          expect(message).to match(%r{#{@record_dir_file} does not exist: apply class clone_army})
        end

        it 'refuses a file naming it that others can write' do
          File.chmod(0o666, @record_dir_file)
          message = refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
          expect(message).to match(%r{#{@record_dir_file} is not root's own})
        end

        it 'refuses a file naming it that is a symlink' do
          real = "#{@record_dir_file}.real"
          File.rename(@record_dir_file, real)
          File.symlink(real, @record_dir_file)
          refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
        end

        it 'refuses a directory reached through a symlink' do
          link = "#{@record_dir}-link"
          File.symlink(@record_dir, link)
          File.write(@record_dir_file, "#{link}\n")
          message = refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
          expect(message).to match(%r{reached through a symlink})
        end

        it 'refuses a directory every user can write' do
          File.chmod(0o777, @record_dir)
          message = refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
          expect(message).to match(%r{#{@record_dir} is writable by every user})
        end

        it 'refuses a file that names anything but one plain directory' do
          ["/var/log/../etc\n", "/var/log\n/etc\n", "relative\n", ''].each do |text|
            File.write(@record_dir_file, text)
            refused({ 'from' => 'timeline.jsonl' }, 'from', kind: 'clone_army/record-dir-unknown')
          end
        end
      end
    end

    it 'refuses output without from' do
      expect(described_class).not_to receive(:run)
      result, status = run_task(:report, 'output' => '/tmp/x.html')
      expect(status).to eq(1)
      expect(result['_error']['details']).to eq('field' => 'output')
    end

    {
      'interval' => 0, 'server' => 'http://puppet.example.com', 'ca_cert' => 'ca.pem', 'format' => 'yaml', 'from' => '/etc/shadow'
    }.each do |key, bad|
      it "refuses #{key} #{bad.inspect} without running anything" do
        expect(described_class).not_to receive(:run)
        result, status = run_task(:report, key => bad)
        expect(status).to eq(1)
        expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => key })
        expect(result['_error']['msg']).to start_with("#{key} must be")
      end
    end
  end

  describe 'clone_army::exec' do
    it 'runs the command in every clone when no clones are given, as argv after --' do
      expect_run([helper, 'exec', '--all', '--format', 'json', '--', 'puppet', 'agent', '-t'],
                 '{"protocol":2,"ok":true,"result":{"clones":[]}}')
      expect(run_task(:exec, 'command' => ['puppet', 'agent', '-t']).last).to eq(0)
    end

    it 'passes clones, concurrency and timeout, and shell syntax word for word' do
      command = ['sh', '-c', 'echo $HOSTNAME; rm -rf /tmp/x && true', '--all', '`id`']
      expect_run([helper, 'exec', '--clone', 'clone1', '--clone', 'clone2', '--concurrency', '10', '--timeout', '600',
                  '--format', 'json', '--', *command], '{"protocol":2,"ok":true,"result":{"clones":[]}}')
      run_task(:exec, 'command' => command, 'clones' => ['clone1', 'clone2'],
                      'concurrency' => 10, 'timeout' => 600)
    end

    it 'ignores the parameters Bolt adds (_task, _installdir) and nulls' do
      expect_run([helper, 'exec', '--all', '--format', 'json', '--', 'true'], '{"protocol":2,"ok":true,"result":{}}')
      run_task(:exec, 'command' => ['true'], 'clones' => nil, '_task' => 'clone_army::exec',
                      '_installdir' => '/tmp/x')
    end

    [
      ['command', nil], ['command', []], ['command', 'puppet agent -t'], ['command', ['puppet', '']],
      ['clones', []], ['clones', ['Clone1']], ['clones', ['--all']], ['clones', 'clone1'],
      ['concurrency', 0], ['concurrency', '10'], ['timeout', -1]
    ].each do |key, bad|
      it "refuses #{key} #{bad.inspect}" do
        expect(described_class).not_to receive(:run)
        params = { 'command' => ['true'] }.merge(key => bad)
        params.delete(key) if bad.nil?
        result, status = run_task(:exec, params)
        expect(status).to eq(1)
        expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => key })
      end
    end

    it 'fails on output that is not JSON, showing it' do
      expect_run([helper, 'exec', '--all', '--format', 'json', '--', 'true'], "thread 'main' panicked\n", 101)
      result, status = run_task(:exec, 'command' => ['true'])
      expect(status).to eq(101)
      expect(result['_error']['kind']).to eq('clone_army/malformed-output')
      expect(result['_error']['details']['stdout']).to include('panicked')
    end

    it 'fails on ok:true with a non-zero exit' do
      expect_run([helper, 'exec', '--all', '--format', 'json', '--', 'true'], '{"protocol":2,"ok":true,"result":{}}', 1)
      expect(run_task(:exec, 'command' => ['true']).last).to eq(1)
    end
  end

  describe 'clone_army::fleet' do
    it 'status: one clone list' do
      expect_run([helper, 'clone', 'list', '--format', 'json'], ok_list)
      result, status = run_task(:fleet, 'action' => 'status')
      expect(status).to eq(0)
      expect(result['result']['clones'].map { |clone| clone['name'] }).to eq(['clone1', 'clone2'])
    end

    ['start', 'stop'].each do |action|
      it "#{action}: lists the clones, then #{action}s every one of them" do
        expect_run([helper, 'clone', 'list', '--format', 'json'], ok_list)
        expect_run([helper, 'clone', action, '--', 'clone1', 'clone2'], ok_list)
        expect(run_task(:fleet, 'action' => action).last).to eq(0)
      end

      it "#{action}: with no clones, answers with the empty listing" do
        expect_run([helper, 'clone', 'list', '--format', 'json'], ok_empty)
        expect(run_task(:fleet, 'action' => action)).to eq([JSON.parse(ok_empty), 0])
      end
    end

    it 'stops at a failed listing' do
      expect_run([helper, 'clone', 'list', '--format', 'json'], failed, 1)
      result, status = run_task(:fleet, 'action' => 'start')
      expect(status).to eq(1)
      expect(result['_error']['kind']).to eq('clone_army/systemd')
    end

    it 'refuses a listing without clones' do
      expect_run([helper, 'clone', 'list', '--format', 'json'], '{"protocol":2,"ok":true,"result":{}}')
      result, status = run_task(:fleet, 'action' => 'stop')
      expect(status).to eq(1)
      expect(result['_error']['kind']).to eq('clone_army/malformed-output')
    end

    it 'passes on the failure of start' do
      expect_run([helper, 'clone', 'list', '--format', 'json'], ok_list)
      expect_run([helper, 'clone', 'start', '--', 'clone1', 'clone2'], failed, 1)
      expect(run_task(:fleet, 'action' => 'start').last).to eq(1)
    end

    [nil, 'restart'].each do |bad|
      it "refuses action #{bad.inspect}" do
        expect(described_class).not_to receive(:run)
        params = bad ? { 'action' => bad } : {}
        result, status = run_task(:fleet, params)
        expect(status).to eq(1)
        expect(result['_error']['details']).to eq('field' => 'action')
      end
    end
  end

  # A helper ended by a signal has no exit status (the kernel's OOM killer
  # sends SIGKILL): Bolt gets an `_error` saying so, never a Ruby crash.
  describe 'a helper killed by a signal' do
    around(:each) do |example|
      Dir.mktmpdir('clone-army-killed') do |dir|
        @killed = File.join(dir, 'clone-army')
        ENV[described_class::TEST_HELPER_ENV] = @killed
        example.run
      ensure
        ENV.delete(described_class::TEST_HELPER_ENV)
      end
    end

    def helper_killed_by(signal)
      File.write(@killed, "#!/bin/sh\nkill -#{signal} $$\n")
      File.chmod(0o755, @killed)
    end

    it 'gives a clear _error naming SIGKILL and the OOM killer, with 128 + 9, not a crash' do
      helper_killed_by('KILL')
      result, status = run_task(:report, {})
      expect(status).to eq(137)
      expect(result['_error']).to include('kind' => 'clone_army/helper-killed',
                                          'details' => { 'signal' => 'SIGKILL', 'signal_number' => 9 })
      expect(result['_error']['msg']).to match(%r{killed by SIGKILL before it answered; the kernel's out-of-memory killer})
    end

    it 'names any other signal, in every task' do
      helper_killed_by('TERM')
      result, status = run_task(:fleet, 'action' => 'status')
      expect(status).to eq(143)
      expect(result['_error']).to include('kind' => 'clone_army/helper-killed')
      expect(result['_error']['msg']).to eq('clone-army was killed by SIGTERM before it answered')
    end
  end

  # The tasks hold the helper to the protocol and the time limits the
  # providers hold it to (Answer, CallLimits): an answer of another protocol
  # or a malformed one is Bolt's `_error`, never passed on as a success.
  describe 'a helper that does not answer by the protocol' do
    it 'answering in another protocol version is a protocol-mismatch, not a success' do
      expect_run([helper, 'clone', 'list', '--format', 'json'], '{"protocol":1,"ok":true,"result":{"clones":[]}}')
      result, status = run_task(:fleet, 'action' => 'status')
      expect(status).to eq(1)
      expect(result['_error']['kind']).to eq('clone_army/protocol-mismatch')
      expect(result['_error']['msg']).to include('answered in protocol version 1; this module speaks version 2')
    end

    it 'answering a malformed envelope (no ok) is malformed-output, with what it said' do
      envelope = '{"protocol":2,"result":{"runs":[]}}'
      expect_run([helper, 'report', '--format', 'json'], envelope)
      result, status = run_task(:report, {})
      expect(status).to eq(1)
      expect(result['_error']).to include('kind' => 'clone_army/malformed-output',
                                          'details' => { 'stdout' => envelope, 'exitstatus' => 0 })
      expect(result['_error']['msg']).to include('"ok" is neither true nor false')
    end

    it 'failing with a malformed error is malformed-output, keeping its document and exit status' do
      expect_run([helper, 'exec', '--all', '--format', 'json', '--', 'true'], '{"protocol":2,"ok":false,"error":"boom"}', 3)
      result, status = run_task(:exec, 'command' => ['true'])
      expect(status).to eq(3)
      expect(result['error']).to eq('boom')
      expect(result['_error']['kind']).to eq('clone_army/malformed-output')
    end
  end

  describe 'a helper that hangs' do
    around(:each) do |example|
      Dir.mktmpdir('clone-army-hung') do |dir|
        @hung = File.join(dir, 'clone-army')
        File.write(@hung, "#!/bin/sh\nexec sleep 20\n")
        File.chmod(0o755, @hung)
        ENV[described_class::TEST_HELPER_ENV] = @hung
        example.run
      ensure
        ENV.delete(described_class::TEST_HELPER_ENV)
      end
    end

    it 'is stopped at the call\'s limit and answers a helper-timeout _error' do
      expect(PuppetX::CloneArmy::CallLimits).to receive(:seconds).with(['clone', 'list', '--format', 'json'], helper: @hung).and_return(1)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result, status = run_task(:fleet, 'action' => 'status')
      expect(Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).to be < 10
      expect(status).to eq(1)
      expect(result['_error']).to include('kind' => 'clone_army/helper-timeout', 'details' => { 'seconds' => 1 })
      expect(result['_error']['msg']).to match(%r{did not finish within 1 s and was stopped; .*run the task again})
    end
  end

  describe '.time_limit' do
    it 'is the providers\' limit for the verb, a ramp on top, and none for a burst the caller sizes' do
      limits = PuppetX::CloneArmy::CallLimits
      expect(described_class.time_limit(['clone', 'list'])).to eq(limits.seconds(['clone', 'list']))
      expect(described_class.time_limit(['report', '--format', 'json'])).to eq(limits.seconds(['report']))
      expect(described_class.time_limit(['exec', '--all', '--', 'true'])).to be_nil
    end
  end

  describe 'parameters on stdin' do
    it 'refuses input that is not a JSON object' do
      output = StringIO.new
      expect(described_class.main(:fleet, StringIO.new('["start"]'), output)).to eq(1)
      expect(JSON.parse(output.string)['_error']['msg']).to match(%r{not a JSON object})
    end
  end

  describe '.run' do
    it 'says the helper is missing' do
      expect { described_class.run(['/nonexistent/clone-army', 'report']) }
        .to raise_error(described_class::ParameterError, %r{not installed at /nonexistent/clone-army}) { |error|
          expect(error.kind).to eq('helper-missing')
        }
    end
  end
end

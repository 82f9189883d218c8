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
    it 'runs `clone-army report` with no flags by default' do
      expect_run([helper, 'report'], '{"protocol":2,"ok":true,"result":{"clones":[]}}')
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
                  '--client-key', '/etc/puppetlabs/puppet/ssl/private_keys/load1.pem'], '{"protocol":2,"ok":true,"result":{}}')
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
        .to raise_error(PuppetX::CloneArmy::Task::ParameterError, %r{puppetdb must be an https:// URL})
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
      let(:timeline) { '/var/log/puppet-clone-army/timeline.jsonl' }
      let(:written) do
        '{"protocol":2,"ok":true,"result":{"page":"/var/log/puppet-clone-army/timeline.html","bytes":20480,' \
          '"samples":360,"skipped_lines":0}}'
      end

      it 'writes the page beside the timeline and answers with its path' do
        expect_run([helper, 'report', '--from', timeline, '--format', 'html', '--output',
                    '/var/log/puppet-clone-army/timeline.html'], written)
        result, status = run_task(:report, 'from' => timeline, 'format' => 'html')
        expect(status).to eq(0)
        expect(result['result']['page']).to eq('/var/log/puppet-clone-army/timeline.html')
      end

      it 'writes the page where output says' do
        expect_run([helper, 'report', '--from', '/srv/runs/lab', '--format', 'html', '--output', '/srv/pages/lab.html'],
                   written)
        _, status = run_task(:report, 'from' => '/srv/runs/lab', 'format' => 'html', 'output' => '/srv/pages/lab.html')
        expect(status).to eq(0)
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
        [{ 'format' => 'table', 'output' => '/tmp/x.html' }, 'output', %r{give format html}],
        [{ 'format' => 'html', 'output' => 'x.html' }, 'output', %r{output must be an absolute path}],
      ].each do |extra, field, message|
        it "refuses #{extra.inspect} without running anything" do
          expect(described_class).not_to receive(:run)
          result, status = run_task(:report, { 'from' => timeline }.merge(extra))
          expect(status).to eq(1)
          expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => field })
          expect(result['_error']['msg']).to match(message)
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
      'interval' => 0, 'server' => 'puppet.example.com', 'ca_cert' => 'ca.pem', 'format' => 'yaml', 'from' => 'run.jsonl'
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
      expect_run([helper, 'exec', '--all', '--', 'puppet', 'agent', '-t'], '{"protocol":2,"ok":true,"result":{"clones":[]}}')
      expect(run_task(:exec, 'command' => ['puppet', 'agent', '-t']).last).to eq(0)
    end

    it 'passes clones, concurrency and timeout, and shell syntax word for word' do
      command = ['sh', '-c', 'echo $HOSTNAME; rm -rf /tmp/x && true', '--all', '`id`']
      expect_run([helper, 'exec', '--clone', 'clone1', '--clone', 'clone2', '--concurrency', '10', '--timeout', '600',
                  '--', *command], '{"protocol":2,"ok":true,"result":{"clones":[]}}')
      run_task(:exec, 'command' => command, 'clones' => ['clone1', 'clone2'],
                      'concurrency' => 10, 'timeout' => 600)
    end

    it 'ignores the parameters Bolt adds (_task, _installdir) and nulls' do
      expect_run([helper, 'exec', '--all', '--', 'true'], '{"protocol":2,"ok":true,"result":{}}')
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
      expect_run([helper, 'exec', '--all', '--', 'true'], "thread 'main' panicked\n", 101)
      result, status = run_task(:exec, 'command' => ['true'])
      expect(status).to eq(101)
      expect(result['_error']['kind']).to eq('clone_army/malformed-output')
      expect(result['_error']['details']['stdout']).to include('panicked')
    end

    it 'fails on ok:true with a non-zero exit' do
      expect_run([helper, 'exec', '--all', '--', 'true'], '{"protocol":2,"ok":true,"result":{}}', 1)
      expect(run_task(:exec, 'command' => ['true']).last).to eq(1)
    end
  end

  describe 'clone_army::fleet' do
    it 'status: one clone list' do
      expect_run([helper, 'clone', 'list'], ok_list)
      result, status = run_task(:fleet, 'action' => 'status')
      expect(status).to eq(0)
      expect(result['result']['clones'].map { |clone| clone['name'] }).to eq(['clone1', 'clone2'])
    end

    ['start', 'stop'].each do |action|
      it "#{action}: lists the clones, then #{action}s every one of them" do
        expect_run([helper, 'clone', 'list'], ok_list)
        expect_run([helper, 'clone', action, '--', 'clone1', 'clone2'], ok_list)
        expect(run_task(:fleet, 'action' => action).last).to eq(0)
      end

      it "#{action}: with no clones, answers with the empty listing" do
        expect_run([helper, 'clone', 'list'], ok_empty)
        expect(run_task(:fleet, 'action' => action)).to eq([JSON.parse(ok_empty), 0])
      end
    end

    it 'stops at a failed listing' do
      expect_run([helper, 'clone', 'list'], failed, 1)
      result, status = run_task(:fleet, 'action' => 'start')
      expect(status).to eq(1)
      expect(result['_error']['kind']).to eq('clone_army/systemd')
    end

    it 'refuses a listing without clones' do
      expect_run([helper, 'clone', 'list'], '{"protocol":2,"ok":true,"result":{}}')
      result, status = run_task(:fleet, 'action' => 'stop')
      expect(status).to eq(1)
      expect(result['_error']['kind']).to eq('clone_army/malformed-output')
    end

    it 'passes on the failure of start' do
      expect_run([helper, 'clone', 'list'], ok_list)
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

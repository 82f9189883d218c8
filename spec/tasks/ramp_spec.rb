# frozen_string_literal: true

require 'spec_helper'
require 'stringio'
require 'puppet_x/clone_army/task'

# clone_army::ramp: `clone-army ramp run` with the caller's schedule, bounds
# and views, its baseline and timeline new files in the recorder's directory.
describe 'clone_army::ramp' do
  let(:task) { PuppetX::CloneArmy::Task }
  let(:ramp_args) { PuppetX::CloneArmy::RampArgs }
  let(:helper) { '/usr/local/sbin/clone-army' }
  let(:answered) do
    '{"protocol":2,"ok":true,"result":{"output":"/var/log/puppet-clone-army/stock.json","baseline":{"ramp":1,' \
      '"verdict":{"ended_by":"degraded","knee":156}}}}'
  end
  let(:now) { Time.utc(2026, 12, 7, 18, 0, 5) }

  # The recorder's directory, named as class clone_army names it, in a file
  # the task finds through its test hook.
  around(:each) do |example|
    Dir.mktmpdir('clone-army-ramp') do |tmp|
      @dir = File.join(tmp, 'log')
      Dir.mkdir(@dir)
      File.chmod(0o755, @dir)
      etc = File.join(tmp, 'etc')
      Dir.mkdir(etc)
      File.chmod(0o755, etc)
      record_dir_file = File.join(etc, 'record_dir')
      File.write(record_dir_file, "#{@dir}\n")
      File.chmod(0o644, record_dir_file)
      ENV[PuppetX::CloneArmy::RecordDir::TEST_ENV] = record_dir_file
      example.run
    ensure
      ENV.delete(PuppetX::CloneArmy::RecordDir::TEST_ENV)
    end
  end

  def in_dir(name)
    File.join(@dir, name)
  end

  # Runs the task with `params` on stdin; [parsed stdout, exit status].
  def run_ramp(params)
    output = StringIO.new
    status = task.main(:ramp, StringIO.new(JSON.generate(params)), output)
    [JSON.parse(output.string), status]
  end

  # Runs the task with `params`, expecting a refusal of `field` before
  # anything runs; the refusal's message.
  def refused(params, field)
    expect(task).not_to receive(:run)
    result, status = run_ramp(params)
    expect(status).to eq(1)
    expect(result['_error']).to include('kind' => 'clone_army/invalid-parameter', 'details' => { 'field' => field })
    result['_error']['msg']
  end

  describe 'its argv' do
    it 'passes every parameter as its flag, the files in the recorder\'s directory' do
      params = {
        'step' => 25, 'max_clones' => 500, 'interval' => 1800, 'settle' => 900, 'hold' => 3600, 'repeat' => 3,
        'resolution' => '5%', 'label' => 'stock, 2 JRubies', 'max_p95' => 30, 'max_error_rate' => 0.5,
        'max_jruby_wait' => 500, 'min_throughput' => 90, 'max_borrow_timeouts' => 0, 'max_queue_limit_hits' => 0,
        'max_puppetdb_queue' => 1000, 'server' => 'puppet.example.com', 'puppetdb' => 'https://puppetdb.example.com:8081',
        'ca_cert' => '/etc/puppetlabs/puppet/ssl/certs/ca.pem', 'client_cert' => '/etc/puppetlabs/puppet/ssl/certs/l.pem',
        'client_key' => '/etc/puppetlabs/puppet/ssl/private_keys/l.pem', 'baseline' => 'stock.json', 'timeline' => 'stock.jsonl'
      }
      expect(ramp_args.argv(params)).to eq(
        ['ramp', 'run', '--output', in_dir('stock.json'), '--timeline', in_dir('stock.jsonl'), '--interval', '1800',
         '--step', '25', '--settle', '900', '--hold', '3600', '--repeat', '3', '--max-clones', '500', '--resolution', '5%',
         '--label', 'stock, 2 JRubies', '--max-p95', '30', '--max-error-rate', '0.5', '--max-jruby-wait', '500',
         '--min-throughput', '90', '--max-borrow-timeouts', '0', '--max-queue-limit-hits', '0', '--max-puppetdb-queue', '1000',
         '--server', 'puppet.example.com', '--puppetdb', 'https://puppetdb.example.com:8081',
         '--ca-cert', '/etc/puppetlabs/puppet/ssl/certs/ca.pem', '--client-cert', '/etc/puppetlabs/puppet/ssl/certs/l.pem',
         '--client-key', '/etc/puppetlabs/puppet/ssl/private_keys/l.pem'],
      )
    end

    it 'names the files after the UTC time, and gives the clones\' default runinterval' do
      expect(ramp_args.argv({ 'step' => 5, 'max_p95' => 30 }, now)).to eq(
        ['ramp', 'run', '--output', in_dir('ramp-20261207T180005Z.json'), '--timeline', in_dir('ramp-20261207T180005Z.jsonl'),
         '--interval', PuppetX::CloneArmy::Schema.default(:runinterval).to_s, '--step', '5', '--max-p95', '30'],
      )
    end

    it 'names the file left out after the one given' do
      expect(ramp_args.argv({ 'step' => 5, 'baseline' => in_dir('tuned.json') }, now).values_at(3, 5))
        .to eq([in_dir('tuned.json'), in_dir('tuned.jsonl')])
      expect(ramp_args.argv({ 'step' => 5, 'timeline' => 'tuned.jsonl' }, now).values_at(3, 5))
        .to eq([in_dir('tuned.json'), in_dir('tuned.jsonl')])
    end

    it 'takes a resolution in clones as a number or a string, and a share as a string' do
      [[5, '5'], ['5', '5'], ['10%', '10%'], ['2.5%', '2.5%']].each do |given, flag|
        expect(ramp_args.argv('step' => 5, 'resolution' => given).each_cons(2).to_a).to include(['--resolution', flag])
      end
    end
  end

  describe 'what it refuses before anything runs' do
    it 'a parameter it does not take, naming it and what it takes' do
      expect(refused({ 'step' => 5, 'max_p59' => 30 }, 'max_p59')).to match(%r{clone_army::ramp takes no max_p59; it takes .*max_p95})
      refused({ 'step' => 5, 'every' => 5 }, 'every')
      refused({ 'step' => 5, 'start_at' => '2026-12-07T18:00:00Z' }, 'start_at')
    end

    it 'no step' do
      expect(refused({ 'max_p95' => 30 }, 'step')).to match(%r{step is required})
    end

    it 'a helper, as every task does' do
      expect(refused({ 'step' => 5, 'helper' => '/tmp/x' }, 'helper')).to match(%r{run only the installed helper})
    end

    [
      ['step', 0], ['step', '25'], ['step', 2.5], ['max_clones', 0], ['interval', 59], ['interval', 604_801],
      ['interval', '1800'], ['settle', -1], ['hold', 0], ['repeat', 0], ['repeat', 11], ['resolution', 0],
      ['resolution', '100%'], ['resolution', '5 clones'], ['resolution', 5.5], ['label', ''],
      ['label', "a\nb"], ['label', 'x' * 201], ['label', 7], ['max_p95', '30'], ['max_p95', 'NaN'], ['max_error_rate', [1]],
      ['max_borrow_timeouts', -1], ['max_borrow_timeouts', 0.5], ['max_queue_limit_hits', '0'], ['max_puppetdb_queue', true],
      ['server', 'http://puppet:8140'], ['puppetdb', 'puppetdb example'], ['ca_cert', 'ca.pem'], ['client_cert', '/c.pem']
    ].each do |key, bad|
      it "#{key} #{bad.inspect}, naming it" do
        message = refused({ 'step' => 5, 'max_p95' => 30 }.merge(key => bad), key == 'client_cert' ? 'client_key' : key)
        expect(message).to start_with(key) unless key == 'client_cert'
      end
    end

    # Root writing where a caller allowed only this task says.
    [
      ['baseline', '/etc/cron.d/x.json'], ['baseline', '../x.json'], ['baseline', '.x.json'], ['baseline', 'x.jsonl'],
      ['baseline', 'sub/x.json'], ['timeline', '/etc/x.jsonl'], ['timeline', 'x.json'], ['timeline', "#{Dir.tmpdir}/x.jsonl"]
    ].each do |key, bad|
      it "a #{key} #{bad} outside the recorder's directory or of another kind" do
        expect(refused({ 'step' => 5, key => bad }, key)).to start_with("#{key} must be a file name ending in .json")
      end
    end

    it 'a file that is there already, which it leaves as it is' do
      File.write(in_dir('stock.json'), 'kept')
      File.write(in_dir('timeline.jsonl'), 'recorded')
      expect(refused({ 'step' => 5, 'baseline' => 'stock.json' }, 'baseline')).to match(%r{stock\.json is there already})
      expect(refused({ 'step' => 5, 'timeline' => 'timeline.jsonl' }, 'timeline')).to match(%r{is there already})
      # The default of the other: timeline.json would be new, stock.jsonl too; stock.json is not.
      expect(refused({ 'step' => 5, 'timeline' => 'stock.jsonl' }, 'baseline')).to match(%r{stock\.json is there already})
      expect([File.read(in_dir('stock.json')), File.read(in_dir('timeline.jsonl'))]).to eq(['kept', 'recorded'])
    end

    it 'a symlink where a file would go, leaving its target alone' do
      target = in_dir('preload')
      File.write(target, 'kept')
      File.symlink(target, in_dir('x.json'))
      expect(refused({ 'step' => 5, 'baseline' => 'x.json' }, 'baseline')).to match(%r{is a link})
      expect(File.read(target)).to eq('kept')
    end
  end

  describe 'its run' do
    it 'answers the helper\'s JSON with the timeline\'s path beside the baseline\'s' do
      argv = [helper, *ramp_args.argv({ 'step' => 5, 'max_p95' => 30, 'baseline' => 'stock.json' }, now)]
      expect(task).to receive(:run).with(argv).and_return([answered, 0])
      result, status = run_ramp('step' => 5, 'max_p95' => 30, 'baseline' => 'stock.json')
      expect(status).to eq(0)
      expect(result['result']).to include('output' => '/var/log/puppet-clone-army/stock.json', 'timeline' => in_dir('stock.jsonl'))
      expect(result.dig('result', 'baseline', 'verdict', 'knee')).to eq(156)
    end

    it 'passes on the helper\'s refusal of a figure out of its range, naming the flag' do
      refusal = '{"protocol":2,"ok":false,"error":{"kind":"invalid-argument","message":"hold 60: a step holds at least the run ' \
                'interval (1800 s)","field":"hold","causes":[]}}'
      expect(task).to receive(:run).and_return([refusal, 2])
      result, status = run_ramp('step' => 5, 'max_p95' => 30, 'hold' => 60)
      expect(status).to eq(2)
      expect(result['_error']).to include('kind' => 'clone_army/invalid-argument', 'details' => a_hash_including('field' => 'hold'))
    end
  end

  # The helper says how long the ramp of an argv can take (`ramp longest`):
  # the task asks it for the argv it runs, within an ordinary call's limit.
  # The answers are the helper's own for these figures (helper/tests/cli.rs
  # writes them).
  describe 'its time limit' do
    limits = PuppetX::CloneArmy::CallLimits
    runner = PuppetX::CloneArmy::Runner
    call_seconds = PuppetX::CloneArmy::Schema.fetch('waits', 'call_seconds')
    bounded = { 'step' => 25, 'max_clones' => 100, 'interval' => 1800, 'max_p95' => 30, 'baseline' => 'stock.json' }

    # The answer of `ramp longest` in spec/fixtures/helper/generated/<name>.json.
    def longest_answer(name, exitstatus = 0)
      PuppetX::CloneArmy::Runner::Result.new(helper_fixture("generated/#{name}.json"), '', exitstatus, nil)
    end

    # Expects the helper to be asked the longest of `args` once, answering `name`.
    def expect_longest(args, name, exitstatus = 0)
      expect(PuppetX::CloneArmy::Runner).to receive(:run)
        .with([helper, 'ramp', 'longest', *args.drop(2)], timeout: PuppetX::CloneArmy::Schema.fetch('waits', 'call_seconds'))
        .once.ordered.and_return(longest_answer(name, exitstatus))
    end

    it 'is the longest the helper says a ramp run of the same argv can take' do
      args = ramp_args.argv(bounded, now)
      expect_longest(args, 'ramp_longest')
      # 4 coarse steps, 5 levels of bisection, each late by a call: the helper's sum.
      expect(limits.seconds(args, helper: helper)).to eq(99_000)
    end

    it 'is none when the helper says the steps are not bounded (no max_clones)' do
      args = ramp_args.argv(bounded.reject { |key, _| key == 'max_clones' }, now)
      expect_longest(args, 'ramp_longest_unbounded')
      expect(limits.seconds(args, helper: helper)).to be_nil
    end

    it 'asks no helper for another verb\'s limit, and needs one for a ramp\'s' do
      expect(runner).not_to receive(:run)
      expect(limits.seconds(['clone', 'list'])).to eq(call_seconds)
      expect { limits.seconds(['ramp', 'run', '--step', '5']) }.to raise_error(ArgumentError, %r{name the helper})
    end

    it 'refuses an answer that is not a number of seconds, and a refusal, as the ramp would meet them' do
      args = ramp_args.argv(bounded, now)
      [['"soon"', '"soon"'], ['0', '0'], ['1.5', '1.5'], [nil, 'null']].each do |seconds, shown|
        result = seconds ? "{\"seconds\":#{seconds},\"steps\":9}" : '{}'
        answer = "{\"protocol\":2,\"ok\":true,\"result\":#{result}}"
        expect(runner).to receive(:run).and_return(runner::Result.new(answer, '', 0, nil))
        said = %r{"seconds" is #{Regexp.escape(shown)}, neither}
        expect { limits.seconds(args, helper: helper) }.to raise_error(PuppetX::CloneArmy::Answer::Refused, said) { |e|
          expect(e.kind).to eq('malformed-output')
        }
      end
      expect_longest(args, 'ramp_longest_refused', 2)
      expect { limits.seconds(args, helper: helper) }.to raise_error(PuppetX::CloneArmy::Answer::Refused, %r{hold "60" is invalid}) { |e|
        expect([e.kind, e.field]).to eq(['invalid-argument', 'hold'])
      }
    end

    context 'with the task running a helper' do
      before(:each) do
        stub_const("#{task}::TEST_HELPER_ENV", 'CLONE_ARMY_RAMP_SPEC_HELPER')
        ENV['CLONE_ARMY_RAMP_SPEC_HELPER'] = '/bin/true'
        allow(Time).to receive(:now).and_return(now)
      end

      after(:each) { ENV.delete('CLONE_ARMY_RAMP_SPEC_HELPER') }

      let(:helper) { '/bin/true' }

      it 'runs the ramp under the longest the helper answered' do
        args = ramp_args.argv(bounded, now)
        expect_longest(args, 'ramp_longest')
        expect(runner).to receive(:run).with([helper, *args], timeout: 99_000).once.ordered
                                       .and_return(runner::Result.new(answered, '', 0, nil))
        expect(run_ramp(bounded).last).to eq(0)
      end

      it 'answers the helper\'s refusal of the ramp\'s arguments without running it' do
        params = bounded.merge('hold' => 60)
        expect_longest(ramp_args.argv(params, now), 'ramp_longest_refused', 2)
        result, status = run_ramp(params)
        expect(status).to eq(2)
        expect(result['_error']).to include('kind' => 'clone_army/invalid-argument', 'details' => a_hash_including('field' => 'hold'))
        expect(result['_error']['msg']).to include('a step holds at least the run interval (1800 s)')
      end

      it 'answers a helper that does not say in time as a helper-timeout, without running the ramp' do
        expect(runner).to receive(:run).once.and_raise(runner::Timeout.new([helper], call_seconds))
        result, status = run_ramp(bounded)
        expect(status).to eq(1)
        expect(result['_error']).to include('kind' => 'clone_army/helper-timeout', 'details' => { 'seconds' => call_seconds })
      end
    end
  end

  # One place for each rule: the metadata Bolt checks says what the task
  # checks (RampArgs), what the helper's schema says, and what the report
  # task's metadata says of the same views and files.
  describe 'its metadata' do
    root = File.expand_path('../..', __dir__)
    metadata = JSON.parse(File.read(File.join(root, 'tasks', 'ramp.json')))
    parameters = metadata['parameters']
    report = JSON.parse(File.read(File.join(root, 'tasks', 'report.json')))['parameters']
    type = ->(name) { Puppet::Pops::Types::TypeParser.singleton.parse(parameters.fetch(name)['type']) }

    it 'declares the parameters the task takes, and no other' do
      expect(parameters.keys).to match_array(PuppetX::CloneArmy::RampArgs::PARAMS)
    end

    it 'types the views as the report task does' do
      PuppetX::CloneArmy::RampArgs::VIEWS.each { |key| expect(parameters[key]['type']).to eq(report[key]['type']), key }
    end

    it 'types the files as the report task types its page, each with its own ending' do
      page = report['output']['type']
      expect(parameters['baseline']['type']).to eq(page.sub('\\.html', '\\.json'))
      expect(parameters['timeline']['type']).to eq(page.sub('\\.html', '\\.jsonl'))
    end

    it 'takes the interval and the repeats in the ranges of the helper\'s schema' do
      runinterval = PuppetX::CloneArmy::Schema.range(:runinterval)
      repeat = PuppetX::CloneArmy::Schema.fetch('ramp', 'repeat')
      expect(parameters['interval']['type']).to eq("Optional[Integer[#{runinterval.min}, #{runinterval.max}]]")
      expect(parameters['repeat']['type']).to eq("Optional[Integer[#{repeat['min']}, #{repeat['max']}]]")
    end

    it 'takes the resolution and the label the task takes, and no other' do
      expect(parameters['resolution']['type']).to include("Pattern[/#{PuppetX::CloneArmy::RampArgs::RESOLUTION.source}/]")
      expect(parameters['label']['type']).to eq("Optional[Pattern[/#{PuppetX::CloneArmy::RampArgs::LABEL.source}/]]")
      {
        'resolution' => [5, '5', '10%', '2.5%', '99.9%', 0, '0', '0%', '100%', '5 clones', 5.5, '', 1_000_000_000],
        'label' => ['stock', 'puppetserver 8.7, 4 JRubies', '', "a\nb", "a\tb", 'x' * 200, 'x' * 201, 7],
      }.each do |key, values|
        kind = PuppetX::CloneArmy::RampArgs::FLAGS.fetch(key).last
        good = PuppetX::CloneArmy::RampArgs::KINDS.fetch(kind).first
        values.each { |value| expect(type.call(key).instance?(value)).to be(good.call(value)), "#{key} #{value.inspect}" }
      end
    end

    it 'types every other parameter as the task checks it' do
      samples = [0, 1, 25, -1, 2.5, '25', nil, true]
      (PuppetX::CloneArmy::RampArgs::FLAGS.keys - ['resolution', 'label', 'repeat']).each do |key|
        good = PuppetX::CloneArmy::RampArgs::KINDS.fetch(PuppetX::CloneArmy::RampArgs::FLAGS.fetch(key).last).first
        samples.compact.each do |value|
          expect(type.call(key).instance?(value)).to be(good.call(value)), "#{key} #{value.inspect}"
        end
      end
    end
  end
end

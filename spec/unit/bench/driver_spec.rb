# frozen_string_literal: true

require 'json'
require 'stringio'
require 'tmpdir'
require_relative '../../../bench/lib/clone_army_bench/driver'

# The bench's teardown, with a stand-in for the two sandboxes: whatever ends a
# run, what was measured is written and both sandboxes go down by name.
describe CloneArmyBench::Driver do
  # Records what the bench asks of its sandboxes; `up` does what the example says.
  let(:fake_host) do
    Class.new do
      attr_reader :calls

      def initialize(&on_up)
        @calls = []
        @on_up = on_up
      end

      def down(name)
        @calls << ['down', name]
        true
      end

      def sandbox!(verb, name = CloneArmyBench::BenchHost::NAME)
        @calls << [verb, name]
        @on_up.call if verb == 'up'
      end

      # Nothing answers inside (the timeline of the page, say).
      def run(*argv, **)
        SandboxDriver::Result.new('', 'not up', 1, argv.join(' '))
      end
    end
  end

  let(:results) { Dir.mktmpdir }

  after { FileUtils.rm_rf(results) }

  before do
    allow(SandboxDriver).to receive(:log)
    # The machine's own mounts (a bench of someone else, say) are not this run's.
    allow(SandboxDriver).to receive(:mounts_left?).and_return(false)
  end

  def run_with(host, env = { 'CLONES' => '20' })
    driver = described_class.new(env: env, out: StringIO.new, stamp: 'STAMP', host: host, results: results)
    allow(driver).to receive(:preflight)
    driver.run
  end

  def teardown_calls
    [['down', 'benchplain'], ['down', 'bench']]
  end

  it 'a_term_during_the_run_writes_what_was_measured_and_takes_both_sandboxes_down' do
    host = fake_host.new do
      Process.kill('TERM', Process.pid)
      sleep 10 # the signal arrives here
    end
    expect(run_with(host)).to eq(130)
    expect(host.calls).to eq(teardown_calls + [['up', 'bench']] + teardown_calls)
    expect(JSON.parse(File.read(File.join(results, 'STAMP.json')))).to include('status' => 'failed (exit 130)')
  end

  it 'a_failure_during_the_run_takes_both_sandboxes_down_and_exits_1' do
    host = fake_host.new { raise 'sandbox.sh up bench failed' }
    expect(run_with(host)).to eq(1)
    expect(host.calls).to eq(teardown_calls + [['up', 'bench']] + teardown_calls)
    expect(JSON.parse(File.read(File.join(results, 'STAMP.json')))).to include('status' => 'failed (exit 1)')
  end

  it 'a_checkin_run_that_hangs_is_ended_at_RUN_TIMEOUT_through_the_teardown' do
    host = fake_host.new { sleep 10 } # the sandbox never comes up
    expect(run_with(host, { 'BENCH' => 'checkin', 'CLONES' => '20', 'RUNINTERVAL' => '300', 'RUN_TIMEOUT' => '1' }))
      .to eq(130)
    expect(host.calls).to eq(teardown_calls + [['up', 'bench']] + teardown_calls)
    # A checkin run works in its raw directory, where its result's raw data stays.
    expect(JSON.parse(File.read(File.join(results, 'STAMP.json')))).to include('status' => 'failed (exit 130)')
    expect(File.directory?(File.join(results, 'STAMP.raw'))).to be(true)
  end

  it 'leaves the signal handlers as it found them' do
    before = trap('TERM', 'DEFAULT').tap { |h| trap('TERM', h) }
    run_with(fake_host.new { raise 'no' })
    expect(trap('TERM', before)).to eq(before)
  end
end

# The phases (the fleet, the CPU comparison) drive the bench through the driver's
# public methods: one they call that the driver keeps private fails only when a run
# gets that far, after minutes of setup.
describe 'the driver as the phases call it' do
  it 'offers every method a phase calls on it' do
    phases = Dir[File.join(__dir__, '../../../bench/lib/clone_army_bench/*.rb')]
    called = phases.flat_map { |file| File.read(file).scan(%r{@bench\.([a-z_]+[?!]?)}).flatten }.uniq
    expect(called).not_to be_empty
    expect(called - CloneArmyBench::Driver.public_instance_methods.map(&:to_s)).to eq([])
  end
end

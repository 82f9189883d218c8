# frozen_string_literal: true

require 'json'
require_relative '../../../bench/lib/clone_army_bench/readings'

# The helper's answers and inside.sh's lines as the bench reads them.
describe CloneArmyBench::Readings do
  def answer(result)
    JSON.generate('version' => 1, 'ok' => true, 'result' => result)
  end

  it 'counts the fleet clones that run, not the bench\'s own clones' do
    clones = [{ 'name' => 'clone1', 'state' => 'running' }, { 'name' => 'clone2', 'state' => 'stopped' },
              { 'name' => 'benchcpu', 'state' => 'running' }, { 'name' => 'clone3x', 'state' => 'running' }]
    expect(described_class.running_count(answer('clones' => clones))).to eq(1)
  end

  it 'refuses a listing that is not JSON rather than counting it as none' do
    expect { described_class.running_count("Error: no\n") }.to raise_error(described_class::Unreadable, %r{clone list: not JSON})
  end

  it 'names the first base, and fails when there is none' do
    expect(described_class.base_name(answer('bases' => [{ 'name' => 'debian-13' }]))).to eq('debian-13')
    expect { described_class.base_name(answer('bases' => [])) }.to raise_error(described_class::Unreadable, %r{no base})
  end

  it 'keeps the watcher\'s runs of fleet clones since the apply, as the runs file holds them' do
    clones = [
      { 'name' => 'clone1', 'last_run' => 1000, 'succeeded' => true, 'total_time' => 3.5 },
      { 'name' => 'clone2', 'last_run' => 999, 'succeeded' => true, 'total_time' => 3.5 },
      { 'name' => 'clone3', 'last_run' => 1001.5, 'succeeded' => nil },
      { 'name' => 'clone4', 'last_run' => nil },
      { 'name' => 'benchd1', 'last_run' => 1002, 'succeeded' => true, 'total_time' => 1 },
    ]
    expect(described_class.watched_runs(answer('clones' => clones), 1000))
      .to eq(["clone1 1000 true 3.5 - - -\n", "clone3 1001.5 null 0 - - -\n"])
    expect(described_class.watched_runs('not json', 0)).to eq([])
  end

  it 'keeps the helper\'s judgement of each run: its status, whether its report was read, why it failed' do
    clones = [
      { 'name' => 'clone1', 'last_run' => 1000, 'succeeded' => false, 'total_time' => 9, 'status' => 'failed',
        'run_report' => 'read', 'failure_kinds' => ['cached-catalog', 'server-error'] },
      { 'name' => 'clone2', 'last_run' => 1000, 'succeeded' => true, 'total_time' => 4, 'status' => 'unchanged',
        'run_report' => 'earlier-run', 'failure_kinds' => [] },
    ]
    expect(described_class.watched_runs(answer('clones' => clones), 1000))
      .to eq(["clone1 1000 false 9 failed read cached-catalog,server-error\n", "clone2 1000 true 4 unchanged earlier-run -\n"])
  end

  it 'gives a word a clone could shape (a space, a newline) as none, so that the columns hold' do
    clones = [{ 'name' => 'clone1', 'last_run' => 1000, 'succeeded' => false, 'total_time' => 9,
                'status' => "failed\nclone9 1 true", 'run_report' => 'read it', 'failure_kinds' => ['a b', 'timeout'] }]
    expect(described_class.watched_runs(answer('clones' => clones), 1000)).to eq(["clone1 1000 false 9 - - timeout\n"])
  end

  it 'says whether clone-army exec ran the agent in its clone' do
    expect(described_class.exec_ran?(answer('clones' => [{ 'name' => 'benchcpu', 'error' => nil }]))).to be(true)
    expect(described_class.exec_ran?(answer('clones' => [{ 'name' => 'benchcpu', 'error' => 'timed out' }]))).to be(false)
    expect(described_class.exec_ran?(JSON.generate('ok' => false, 'error' => { 'kind' => 'x' }))).to be(false)
    expect(described_class.exec_ran?('')).to be(false)
  end

  it 'gives the exit code of the command clone-army exec ran, nil where it did not run' do
    expect(described_class.exec_exit(answer('clones' => [{ 'name' => 'benchcpu', 'exit_code' => 0 }]))).to eq(0)
    expect(described_class.exec_exit(answer('clones' => [{ 'name' => 'benchcpu', 'exit_code' => 1 }]))).to eq(1)
    expect(described_class.exec_exit(answer('clones' => [{ 'name' => 'benchcpu', 'exit_code' => nil }]))).to be_nil
    expect(described_class.exec_exit(answer('clones' => []))).to be_nil
  end

  it 'reads the catalog sizes and the server\'s compile time, with a note of what else it said' do
    view = described_class.catalog(answer(
                                     'clones' => [{ 'name' => 'clone1', 'resources' => 7 }, { 'name' => 'benchcpu', 'resources' => 9 },
                                                  { 'name' => 'clone2' }],
                                     'server' => { 'compile' => { 'mean_ms' => 123.4, 'count' => 40 },
                                                   'jruby' => { 'average_wait_time_ms' => 2 } },
                                   ))
    expect(view).to eq(resources: [7], compile_mean: 123.4, note: '40 compiles; JRuby wait mean 2 ms; ')
    expect(described_class.catalog(answer('clones' => []))).to eq(resources: [], compile_mean: nil,
                                                                  note: '? compiles; JRuby wait mean ? ms; ')
    expect(described_class.catalog('')).to be_nil
  end

  it 'counts the clones inside.sh wait-booted says booted' do
    expect(described_class.booted_count("clone1 running 3\nclone2 degraded 4\nclone3 starting 120\nclone4 unknown 120\n")).to eq(2)
  end

  it 'takes a usage_usec count and nothing else' do
    expect(described_class.usec("123456\n", 'x')).to eq(123_456)
    ['', "12 34\n", '-1', "inside.sh: no cgroup\n"].each do |text|
      expect { described_class.usec(text, 'usage_usec of x') }.to raise_error(described_class::Unreadable, %r{usage_usec of x})
    end
  end

  it 'reads numbers a line each, and refuses words' do
    expect(described_class.numbers("1.5\n2\n", 'x')).to eq([1.5, 2.0])
    expect { described_class.numbers('', 'x') }.to raise_error(described_class::Unreadable, %r{no reading})
    expect { described_class.numbers("1\nfailed\n", 'x') }.to raise_error(described_class::Unreadable, %r{not numbers})
  end

  it 'reads the samples a page was drawn from' do
    expect(described_class.page_samples(answer('samples' => 42))).to eq(42)
    expect(described_class.page_samples('')).to be_nil
  end
end

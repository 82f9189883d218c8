# frozen_string_literal: true

require_relative '../../../bench/lib/clone_army_bench/settings'

describe CloneArmyBench::Settings do
  def settings(env = {})
    described_class.from_env(env)
  end

  it 'takes the defaults the bench has always had' do
    expect(settings.to_h).to include(bench: 'fleet', clones: 500, runinterval: 1800, ramp_up: 300, k: 3, cpu_reps: 5,
                                     noop_reps: 5, start_timeout: 620, apply_timeout: 1800, exec_timeout: 600,
                                     grow_batch: 100, grow_runinterval: 86_400, server_addr: '127.0.0.5',
                                     server_name: 'puppet', dry_run: false)
  end

  it 'gives a small fleet the shortest interval clone-army takes, and a large one 3.6 s per clone' do
    expect(settings('CLONES' => '10').runinterval).to eq(60)
    expect(settings('CLONES' => '1000').runinterval).to eq(3600)
    expect(settings('CLONES' => '10').start_timeout).to eq(130)
  end

  it 'plans the fleet in steps of 50, 100 and 40 more, none above CLONES' do
    expect(settings.fleet_steps).to eq([50, 100, 140, 500])
    expect(settings('CLONES' => '120').fleet_steps).to eq([50, 100, 120, 120])
    expect(settings('CLONES' => '40').fleet_steps).to eq([40, 40, 40, 40])
  end

  it 'grows in batches of GROW_BATCH up to CLONES' do
    expect(settings('CLONES' => '250').batches).to eq([[1, 100], [101, 200], [201, 250]])
  end

  {
    { 'BENCH' => 'fleets' } => "BENCH must be fleet, growth, checkin or cpu, not 'fleets'",
    { 'BENCH' => 'cpu', 'CLONES' => '40' } => "CLONES must be unset with BENCH=cpu (it makes no fleet), not '40'",
    { 'SPLAY' => '1800' } => "SPLAY must be a number of seconds below RUNINTERVAL / 2 (900), not '1800'",
    { 'SPLAY' => 'some' } => "SPLAY must be a number of seconds, not 'some'",
    { 'SAMPLE_EVERY' => '5' } => "SAMPLE_EVERY must be 10 to 3600 seconds, not '5'",
    { 'WATCH_EVERY' => '1000', 'RUNINTERVAL' => '600' } => "WATCH_EVERY must be 5 to 300 seconds, not '1000'",
    { 'RUN_TIMEOUT' => '2h' } => "RUN_TIMEOUT must be a positive number, not '2h'",
    { 'CLONES' => '0' } => "CLONES must be a positive number, not '0'",
    { 'CLONES' => '5e2' } => "CLONES must be a positive number, not '5e2'",
    { 'K' => '' } => "K must be a positive number, not ''",
    { 'CPU_REPS' => '2' } => "CPU_REPS must be at least 3 (the runs a median is taken of), not '2'",
    { 'NOOP_REPS' => '1' } => "NOOP_REPS must be at least 3 (the runs a median is taken of), not '1'",
    { 'RAMP_UP' => '-1' } => "RAMP_UP must be a number of seconds, not '-1'",
    { 'RUNINTERVAL' => '59' } => "RUNINTERVAL must be at least 60 (clone-army's minimum), not '59'",
    { 'GROW_RUNINTERVAL' => '30' } => "GROW_RUNINTERVAL must be at least 60 (clone-army's minimum), not '30'",
    { 'START_TIMEOUT' => 'soon' } => "START_TIMEOUT must be a positive number, not 'soon'",
    { 'APPLY_TIMEOUT' => '0' } => "APPLY_TIMEOUT must be a positive number, not '0'",
    { 'EXEC_TIMEOUT' => '1h' } => "EXEC_TIMEOUT must be a positive number, not '1h'",
    { 'BENCH_DRY_RUN' => 'yes' } => "BENCH_DRY_RUN must be 1 (a dry run), 0 or empty, not 'yes'",
  }.each do |env, message|
    it "refuses #{env.keys.first}=#{env.values.first.inspect}, naming it and what it takes" do
      expect { settings(env) }.to raise_error(CloneArmyBench::Refused, message)
    end
  end

  it 'gives the checkin bench 1000 clones at an hour, and a bound for the whole run' do
    s = settings('BENCH' => 'checkin')
    expect(s.to_h).to include(bench: 'checkin', clones: 1000, runinterval: 3600, ramp_up: 300, splay: 0,
                              sample_every: 60, watch_every: 60, start_timeout: 1120)
    # setup and teardown, the ramp, the start, two intervals with their grace
    expect(s.run_timeout).to eq((2 * 1800) + 300 + 1120 + (2 * (3600 + 0 + 180)))
    expect(settings('BENCH' => 'checkin', 'RUNINTERVAL' => '60').watch_every).to eq(30)
    expect(settings('BENCH' => 'checkin', 'RUN_TIMEOUT' => '900').run_timeout).to eq(900)
  end

  it 'records the checkin bench\'s own settings in its scale, not the fleet\'s' do
    expect(settings('BENCH' => 'checkin', 'CLONES' => '20').scale.keys)
      .to eq(['bench', 'clones', 'runinterval', 'ramp_up', 'splay', 'sample_every', 'watch_every', 'run_timeout',
              'server_addr'])
    expect(settings.scale.keys).to eq(['bench', 'clones', 'runinterval', 'ramp_up', 'k', 'cpu_reps', 'noop_reps',
                                       'server_addr'])
  end

  it 'takes a dry run only from BENCH_DRY_RUN=1' do
    expect([nil, '', '0', '1'].map { |v| settings('BENCH_DRY_RUN' => v).dry_run }).to eq([false, false, false, true])
  end
end

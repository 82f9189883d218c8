# frozen_string_literal: true

require 'json'
require 'stringio'
require 'tmpdir'
require_relative '../../../bench/lib/clone_army_bench/detached'

# A detached run read while it runs and stopped by its PID file. A stand-in
# process plays the run: its command line is a `bench.rb run`'s (bench.rb's path,
# `run` last), so the PID file's check takes it for one; it only sleeps.
describe CloneArmyBench::Detached do
  def stand_in
    Process.spawn('ruby', '-e', 'sleep 60', described_class::BENCH_RB, 'run').tap { |pid| @pids << pid }
  end

  around do |example|
    @pids = []
    Dir.mktmpdir do |dir|
      @raw = File.join(dir, '2026-11-29T050000Z.raw')
      Dir.mkdir(@raw)
      example.run
    end
  ensure
    @pids.each do |pid|
      Process.kill('KILL', pid)
    rescue Errno::ESRCH
      nil
    ensure
      Process.wait(pid) rescue nil # rubocop:disable Style/RescueModifier
    end
  end

  def write_run(pid)
    File.write(File.join(@raw, 'bench.pid'), "#{pid}\n")
    File.write(File.join(@raw, 'scale.json'),
               JSON.generate('bench' => 'checkin', 'clones' => 2, 'runinterval' => 300, 'splay' => 0, 'host' => { 'cpus' => 2 }))
    File.write(File.join(@raw, 'times'), "900 1000\n")
    File.write(File.join(@raw, 'runs'), "clone1 1010 true 5 unchanged read -\nclone2 1020 false 5 failed read server-error\n")
  end

  it 'prints the figures so far while the run goes on' do
    write_run(stand_in)
    out = StringIO.new
    expect(described_class.status(@raw.delete_suffix('.raw'), out, now: 1100)).to eq(0)
    expect(out.string).to include('(running (PID ')
    expect(out.string).to include('| clones whose first run succeeded within the first interval (2 of 2 had a first run; ' \
                                  'failed: server-error 1) | 1 of 2 | all 2 | **no** |')
    expect(out.string).to end_with("log: #{@raw}/bench.log\n")
  end

  it 'says a run whose PID file names a process gone is not running, and gives its figures as it left them' do
    pid = stand_in
    Process.kill('KILL', pid)
    Process.wait(pid)
    write_run(pid)
    out = StringIO.new
    described_class.status(@raw, out, now: 1100)
    expect(out.string).to include('(not running; no result written (killed?))')
  end

  it 'stops the run by its PID file: SIGTERM to that PID, and waits for it' do
    pid = stand_in
    write_run(pid)
    out = StringIO.new
    expect(described_class.stop(@raw, out, wait: 20)).to eq(0)
    expect(out.string).to eq("sent SIGTERM to PID #{pid}; its teardown is under way (log: #{@raw}/bench.log)\nit has ended\n")
  end

  it 'sends nothing to a PID file naming a process that is not a bench run' do
    other = Process.spawn('sleep', '60').tap { |pid| @pids << pid }
    write_run(other)
    out = StringIO.new
    expect(described_class.stop(@raw, out, wait: 1)).to eq(1)
    expect(out.string).to eq("#{@raw}: not running\n")
    expect(Process.kill(0, other)).to eq(1)
  end

  it 'sends nothing for a PID file that is not a PID' do
    File.write(File.join(@raw, 'bench.pid'), "-1\n")
    expect(described_class.stop(@raw, StringIO.new, wait: 1)).to eq(1)
  end

  it 'refuses a setting before anything starts, naming it' do
    Dir.mktmpdir do |results|
      expect { described_class.start({ 'BENCH' => 'checkin', 'SPLAY' => 'x' }, StringIO.new, results: results) }
        .to raise_error(CloneArmyBench::Refused, "SPLAY must be a number of seconds, not 'x'")
      expect(Dir.children(results)).to eq([])
    end
  end
end

# frozen_string_literal: true

require_relative '../../../bench/lib/clone_army_bench/pss'
require_relative '../../../bench/lib/clone_army_bench/runs'

describe CloneArmyBench::Pss do
  readings = described_class.parse("clone1 7449 6 0\nclone2 63388 7 1\nclone3 7423 6 0\nclone4 7422 6 0\n")

  it 'takes the first k clones with no agent process as the idle ones' do
    expect(described_class.idle(readings, 2).map(&:name)).to eq(['clone1', 'clone3'])
  end

  it 'averages in MiB to one decimal and sums in whole MiB' do
    idle = described_class.idle(readings, 3)
    expect(described_class.average_mib(idle)).to eq(7.3)
    expect(described_class.total_mib(readings)).to eq(84)
  end

  it 'has no average of no clone' do
    expect(described_class.average_mib([])).to be_nil
  end

  it 'notes each clone with its processes' do
    expect(described_class.note(readings.first(1))).to eq('clone1 7.3 MiB/6 procs')
  end
end

describe CloneArmyBench::Runs do
  runs = described_class.parse(<<~RUNS)
    clone1 100 false 5
    clone1 100 false 5
    clone2 110 true 4
    clone1 160 true 5
    clone2 170 true 4
    clone3 400 true 3
  RUNS

  it 'counts each clone once that had a successful run end in the window' do
    expect(described_class.checked_in(runs, 100, 200)).to eq(2)
    expect(described_class.checked_in(runs, 100, 500)).to eq(3)
  end

  it 'finds when the last clone had its first successful run since the apply' do
    expect(described_class.all_in_at(runs, 100, 3)).to eq(400.0)
  end

  it 'has no such time until every clone has one' do
    expect(described_class.all_in_at(runs, 100, 4)).to be_nil
  end

  it 'keeps each run once, at its start (end minus its total time)' do
    expect(described_class.starts(runs)).to eq([['clone1', 95.0], ['clone2', 106.0], ['clone1', 155.0], ['clone2', 166.0],
                                                ['clone3', 397.0]])
  end

  it 'reads the older lines that lack the total time' do
    expect(described_class.parse("clone1 1795689250 false\n").first.started).to eq(1_795_689_250.0)
  end

  describe '.phasing' do
    it 'is met when the busiest 12 s hold at most twice the even share, decided on the counts' do
      starts = (0...500).map { |i| ["clone#{i}", i * 3.6] }
      result = described_class.phasing(starts, 0, 1800)
      expect(result).to include(best: 4, total: 500, met: true, share: 0.008)
    end

    it 'is not met by 7 of 500 in 12 s at 1800 s, though the rounded shares look alike' do
      starts = (0...493).map { |i| ["clone#{i}", 20 + (i * 3.6)] } + (0...7).map { |i| ["herd#{i}", i] }
      expect(described_class.phasing(starts, 0, 1800)).to include(best: 7, met: false)
    end

    it 'counts only the starts inside the interval, and has no share without any' do
      expect(described_class.phasing([['c', 5.0]], 10, 60)).to include(share: nil, total: 0, met: false)
    end
  end
end
